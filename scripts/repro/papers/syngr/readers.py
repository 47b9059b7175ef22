"""Readers of the real recommendation data into (item texts, second-modality features, user sequences).

- MovieLens-100k, in either published layout (``source``):
  - ``recbole``: RecBole's atomic files (recbole==1.2.1 wheel, ``recbole/dataset_example/ml-100k/``, UTF-8):
    ``ml-100k.inter`` (user_id, item_id, rating, timestamp; tab-separated with ``name:type`` headers) and
    ``ml-100k.item`` (item_id, movie_title, release_year, class = space-separated genres).
  - ``grouplens``: the raw GroupLens release (files.grouplens.org/datasets/movielens/ml-100k, its README), in
    latin-1: ``u.data`` (user id, item id, rating, timestamp; tab-separated), ``u.item`` (movie id | title with
    its year | release date | video release date | IMDb URL | 19 genre flags; pipe-separated) and ``u.user``
    (user id | age | gender | occupation | zip code). The year is cut from the title, as RecBole's conversion does.
  Text = title; second modality = genre multi-hot plus release decade one-hot.
- Amazon Reviews 2018 (the paper's benchmark, nijianmo.github.io/amazon): a 5-core review file
  ``<Category>_5.json[.gz]`` (one JSON object per line with reviewerID, asin, unixReviewTime, overall) and the
  metadata ``meta_<Category>.json[.gz]`` (asin, title, description, category, brand). Text = title + description;
  second modality = precomputed image embeddings (an .npz with ``asin`` and ``embedding``, e.g. CLIP computed
  beforehand on a GPU) or, without one, the category/brand multi-hot. The k-core filter is re-applied, so a
  truncated download still gives a k-core set.

Every row or record is checked (field count, types, ranges: ids non-empty, ratings 1-5, timestamps non-negative
integers, genre flags 0/1; JSON records parse and carry the fields); one that fails is refused, counted and named
(first ten line numbers) in the report the stage writes to the manifest, and more than ``max_refused`` of a
file's rows refused stops the run with an InputError naming the file. A file cut inside its last row therefore
loses that row, counted, instead of being misread. Files are read line by line.
Sequences are each user's items in time order (ties kept in file order), items renumbered 0..n-1.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from repro.workflow.io import InputError

log = logging.getLogger(__name__)
ML_DIR = "recbole/dataset_example/ml-100k"
GENRES = (
    "unknown", "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime", "Documentary", "Drama", "Fantasy",
    "Film-Noir", "Horror", "Musical", "Mystery", "Romance", "Sci-Fi", "Thriller", "War", "Western",
)  # fmt: skip
YEAR_IN_TITLE = re.compile(r"\s*\((\d{4})\)\s*$")


@dataclass(frozen=True)
class RealData:
    texts: list[str]
    second: np.ndarray  # (n_items, d) float32
    sequences: list[np.ndarray]
    report: dict = field(default_factory=dict)  # per file: rows read, refused (first ten), input paths


class Refusals:
    """Refused rows of one file: counted, the first ten named, and an InputError above ``max_share``."""

    def __init__(self, path: Path, max_share: float) -> None:
        self.path, self.max_share, self.rows, self.refused, self.first = path, max_share, 0, 0, []

    def take(self, where: str, problem: str) -> None:
        self.refused += 1
        if len(self.first) < 10:
            self.first.append(f"{where}: {problem}")

    def close(self) -> dict:
        if self.refused:
            log.warning("%s: %d of %d rows refused: %s", self.path, self.refused, self.rows, self.first)
        if self.rows == 0 or self.refused == self.rows:
            raise InputError(self.path, f"no usable row ({self.refused} refused: {self.first})")
        if self.refused > self.max_share * self.rows:
            raise InputError(
                self.path,
                f"{self.refused} of {self.rows} rows refused (more than {self.max_share:.0%}); first: {self.first}",
            )
        return {"rows": self.rows, "refused": self.refused, "refused_first": self.first}


def _lines(path: Path, encoding: str) -> Iterator[tuple[int, str]]:
    if not path.is_file():
        raise InputError(path, "not found")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding=encoding, newline="") as fh:
            for n, line in enumerate(fh, start=1):
                line = line.rstrip("\r\n")
                if line.strip():
                    yield n, line
    except UnicodeDecodeError as err:
        raise InputError(path, f"not {encoding} text ({err})") from err
    except (OSError, EOFError) as err:  # a gzip cut short
        raise InputError(path, f"cannot read ({err})") from err


def read_rows(
    path: Path, encoding: str, sep: str, check: Callable[[list[str]], object], max_share: float, header: bool = False
) -> tuple[list, dict, list[str]]:
    """Rows of a delimited file as ``check(fields)`` returns them; a row whose check raises ValueError is refused.
    Returns the rows, the file's report and (with ``header``) the header fields."""
    refusals, rows, head = Refusals(path, max_share), [], []
    for n, line in _lines(path, encoding):
        fields = line.split(sep)
        if header and not head:
            head = fields
            continue
        refusals.rows += 1
        try:
            rows.append(check(fields))
        except (ValueError, IndexError) as err:
            refusals.take(f"line {n}", str(err))
    return rows, refusals.close() | {"path": str(path)}, head


def _int(value: str, what: str, low: int | None = None, high: int | None = None) -> int:
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{what} {value!r} is not an integer") from None
    if (low is not None and number < low) or (high is not None and number > high):
        raise ValueError(f"{what} {number} outside [{low}, {high}]")
    return number


def _id(value: str, what: str) -> str:
    if not value.strip():
        raise ValueError(f"empty {what}")
    return value.strip()


def _fields(fields: list[str], count: int) -> list[str]:
    if len(fields) != count:
        raise ValueError(f"{len(fields)} fields, expected {count}")
    return fields


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


def _decade(year: str) -> int:
    """Release decade; a missing or non-numeric year (RecBole's file has "unkonwn") is decade 0."""
    try:
        return int(float(year)) // 10 * 10
    except ValueError:
        return 0


def _second_modality(genres_per_item: list[list[str]], years: list[str]) -> np.ndarray:
    genres = sorted({g for gs in genres_per_item for g in gs})
    decades = sorted({_decade(y) for y in years})
    second = np.zeros((len(years), len(genres) + len(decades)), dtype=np.float32)
    for i, (gs, year) in enumerate(zip(genres_per_item, years, strict=True)):
        for g in gs:
            second[i, genres.index(g)] = 1.0
        second[i, len(genres) + decades.index(_decade(year))] = 1.0
    return second


def _recbole_check(header: list[str], columns: tuple[str, ...], path: Path):
    names = [h.split(":")[0] for h in header]
    missing = [c for c in columns if c not in names]
    if missing:
        raise InputError(path, f"header lacks columns {missing} (has {names})")
    return [names.index(c) for c in columns], len(names)


def read_recbole_movielens(base: Path, max_length: int, max_share: float) -> RealData:
    """MovieLens-100k from RecBole's atomic files under ``base`` (UTF-8, typed headers)."""
    item_path, inter_path = base / "ml-100k.item", base / "ml-100k.inter"
    item_cols = ("item_id", "movie_title", "release_year", "class")
    layout: dict = {}

    def item_row(f: list[str]):
        idx, width = layout["item"]
        f = _fields(f, width)
        return _id(f[idx[0]], "item_id"), f[idx[1]].strip(), f[idx[2]].strip(), f[idx[3]].split()

    known: set[str] = set()

    def inter_row(f: list[str]):
        idx, width = layout["inter"]
        f = _fields(f, width)
        rating = float(f[idx[2]])
        if not 1 <= rating <= 5:
            raise ValueError(f"rating {rating} outside [1, 5]")
        item = _id(f[idx[1]], "item_id")
        if item not in known:
            raise ValueError(f"item {item} is not in ml-100k.item")
        return _id(f[idx[0]], "user_id"), item, float(_int(f[idx[3]].split(".")[0], "timestamp", 0))

    head = _header(item_path, "utf-8")
    layout["item"] = _recbole_check(head, item_cols, item_path)
    items, item_report, _ = read_rows(item_path, "utf-8", "\t", item_row, max_share, header=True)
    known.update(row[0] for row in items)
    head = _header(inter_path, "utf-8")
    layout["inter"] = _recbole_check(head, ("user_id", "item_id", "rating", "timestamp"), inter_path)
    events, inter_report, _ = read_rows(inter_path, "utf-8", "\t", inter_row, max_share, header=True)
    return _movielens(items, events, max_length, [item_report, inter_report], item_path)


def _header(path: Path, encoding: str) -> list[str]:
    for _, line in _lines(path, encoding):
        return line.split("\t")
    raise InputError(path, "empty file (a header line is expected)")


def read_grouplens_movielens(root: Path, max_length: int, max_share: float) -> RealData:
    """MovieLens-100k from the raw GroupLens files under ``root`` (u.data, u.item, u.user; latin-1)."""

    def user_row(f: list[str]):
        f = _fields(f, 5)
        _int(f[1], "age", 0, 120)
        if f[2] not in ("M", "F"):
            raise ValueError(f"gender {f[2]!r} is not M or F")
        return _id(f[0], "user id")

    def item_row(f: list[str]):
        f = _fields(f, 5 + len(GENRES))
        flags = [_int(x, "genre flag", 0, 1) for x in f[5:]]
        title = f[1].strip()
        match = YEAR_IN_TITLE.search(title)
        year = f[2].strip()[-4:] if f[2].strip() else (match.group(1) if match else "")
        return _id(f[0], "movie id"), YEAR_IN_TITLE.sub("", title), year, [g for g, x in zip(GENRES, flags) if x]

    users_seen: set[str] = set()
    known: set[str] = set()

    def data_row(f: list[str]):
        f = _fields(f, 4)
        user, item = _id(f[0], "user id"), _id(f[1], "item id")
        if user not in users_seen:
            raise ValueError(f"user {user} is not in u.user")
        if item not in known:
            raise ValueError(f"item {item} is not in u.item")
        _int(f[2], "rating", 1, 5)
        return user, item, float(_int(f[3], "timestamp", 0))

    users, user_report, _ = read_rows(root / "u.user", "latin-1", "|", user_row, max_share)
    users_seen.update(users)
    items, item_report, _ = read_rows(root / "u.item", "latin-1", "|", item_row, max_share)
    known.update(row[0] for row in items)
    events, data_report, _ = read_rows(root / "u.data", "latin-1", "\t", data_row, max_share)
    return _movielens(items, events, max_length, [user_report, item_report, data_report], root / "u.item")


def _movielens(items: list, events: list, max_length: int, reports: list[dict], item_path: Path) -> RealData:
    ids: dict[str, int] = {}
    kept = []
    for row in items:
        if row[0] in ids:
            raise InputError(item_path, f"item id {row[0]} appears twice")
        ids[row[0]] = len(kept)
        kept.append(row)
    unknown = sum(e[1] not in ids for e in events)
    if unknown:
        raise InputError(item_path, f"{unknown} ratings name items the item file lacks")
    second = _second_modality([r[3] for r in kept], [r[2] for r in kept])
    report = {"files": reports, "items": len(kept), "ratings": len(events)}
    return RealData([r[1] for r in kept], second, sequences_from(events, ids, max_length), report)


def read_movielens(spec: dict, package_root: str | os.PathLike | None, max_length: int) -> RealData:
    """MovieLens-100k in the layout ``spec['source']`` names (recbole: the package files; grouplens: spec['root'])."""
    share = spec.get("max_refused", 0.01)
    if spec.get("source", "recbole") == "recbole":
        if package_root is None:
            raise InputError("recbole", "the recbole package files are not an input of this run")
        return read_recbole_movielens(Path(package_root) / ML_DIR, max_length, share)
    root = spec.get("root")
    if not root or not Path(root).is_dir():
        raise InputError(root or "root", "GroupLens ml-100k folder (u.data, u.item, u.user) not found")
    return read_grouplens_movielens(Path(root), max_length, share)


def _json_records(path: Path, required: tuple[str, ...], max_share: float) -> tuple[list[dict], dict]:
    refusals, records = Refusals(path, max_share), []
    for n, line in _lines(path, "utf-8"):
        refusals.rows += 1
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            refusals.take(f"line {n}", f"not JSON ({err.msg})")
            continue
        missing = [k for k in required if not isinstance(record, dict) or k not in record]
        if missing:
            refusals.take(f"line {n}", f"lacks {missing}")
            continue
        records.append(record)
    return records, refusals.close() | {"path": str(path)}


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
    """Amazon 2018 reviews + metadata (``spec``: reviews, meta, optional image_embeddings, core, max_refused)."""
    share = spec.get("max_refused", 0.01)
    reviews = Path(spec["reviews"])
    records, review_report = _json_records(reviews, ("reviewerID", "asin", "unixReviewTime"), share)
    events, bad = [], Refusals(reviews, share)
    for r in records:
        bad.rows += 1
        try:
            when = _int(str(r["unixReviewTime"]), "unixReviewTime", 0)
            events.append((_id(str(r["reviewerID"]), "reviewerID"), _id(str(r["asin"]), "asin"), float(when)))
        except ValueError as err:
            bad.take(f"reviewer {r.get('reviewerID')}", str(err))
    review_report["refused"] += bad.refused
    review_report["refused_first"] += bad.first[: 10 - len(review_report["refused_first"])]
    if review_report["refused"] > share * review_report["rows"]:
        raise InputError(reviews, f"{review_report['refused']} of {review_report['rows']} records refused")
    metas, meta_report = _json_records(Path(spec["meta"]), ("asin",), share)
    meta = {str(m["asin"]): m for m in metas}
    events = [e for e in k_core(events, spec.get("core", 5)) if e[1] in meta]
    asins = sorted({e[1] for e in events})
    if not asins:
        raise InputError(reviews, "no item is left after the k-core filter and the metadata join")
    texts = [_item_text(meta[a]) for a in asins]
    inputs = [review_report, meta_report]
    if spec.get("image_embeddings"):
        second = _image_embeddings(Path(spec["image_embeddings"]), asins)
        inputs.append({"path": spec["image_embeddings"], "rows": len(asins), "refused": 0, "refused_first": []})
    else:
        tags = sorted({t for a in asins for t in _tags(meta[a])})
        second = np.zeros((len(asins), max(len(tags), 1)), dtype=np.float32)
        for i, a in enumerate(asins):
            for t in _tags(meta[a]):
                second[i, tags.index(t)] = 1.0
    report = {"files": inputs, "items": len(asins), "ratings": len(events)}
    return RealData(texts, second, sequences_from(events, {a: i for i, a in enumerate(asins)}, max_length), report)


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
