"""SEVIR VIL events as SEVIR's users read them: selected from CATALOG.csv, read one event at a time.

The Storm EVent ImagRy data set (Veillette, Samsi and Mattioli, NeurIPS 2020; AWS open data ``s3://sevir``;
layout documented in the data set's README and the ``sevir_tutorial`` notebook of
github.com/MIT-AI-Accelerator/eie-sevir):

- ``CATALOG.csv``: one row per event and image type, columns ``id, file_name, file_index, img_type, time_utc,
  minute_offsets, episode_id, event_id, event_type, llcrnrlat, llcrnrlon, urcrnrlat, urcrnrlon, proj, size_x,
  size_y, height_m, width_m, data_min, data_max, pct_missing``; ``file_name`` is relative to the ``data/``
  folder (``vil/2019/SEVIR_VIL_STORMEVENTS_2019_0701_1231.h5``), ``file_index`` the event's row in that file,
  ``time_utc`` the event time (``2019-06-15 18:35:00``), ``event_type`` empty for random events (ids ``R...``);
- one HDF5 file per type and period with datasets ``id`` (event, bytes) and ``vil`` (event, 384, 384, 49) uint8,
  49 frames 5 minutes apart (minute offsets -120 .. +120);
- VIL is encoded 0-254; **255 is the missing-data code** (no radar coverage). It becomes NaN here, before any
  block averaging, so it never reads as the strongest echo nor spreads into neighbouring cells.

Events are chosen as SEVIR's users choose them (Earthformer, DiffCast): rows of ``img_type == "vil"`` whose
``time_utc`` falls in a split's window ``[start, end)``, optionally of given ``event_type``s, in one of the files
the config lists. A catalog row whose file index or id does not match its file, or whose event is missing more
than ``max_missing`` of its pixels, is refused: counted, its id named (the first ten) in the log and manifest,
and the run fails when more than ``max_refused_fraction`` of the selected events are refused. Every file the
selection needs is opened (and its ``id`` list read) before any event is read, so a missing or broken test file
stops the run before the training files are read.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from repro.data.fields.readers import open_h5
from repro.workflow.io import InputError

log = logging.getLogger(__name__)

CATALOG_COLUMNS = ("id", "file_name", "file_index", "img_type", "time_utc", "event_type", "pct_missing")
FRAMES = 49
MISSING = 255


@dataclass
class Selection:
    """The events of each split, in catalog order within a split, and what was refused (with why)."""

    events: dict[str, pd.DataFrame]
    refused: list[tuple[str, str]] = field(default_factory=list)
    selected: int = 0

    def summary(self) -> dict:
        return {
            "selected": self.selected,
            "used": {s: int(len(e)) for s, e in self.events.items()},
            "refused": len(self.refused),
            "refused_first_ids": [i for i, _ in self.refused[:10]],
            "refused_reasons": sorted({why for _, why in self.refused}),
        }


def read_catalog(path: str | os.PathLike) -> pd.DataFrame:
    """CATALOG.csv with its types checked; an unreadable file or a missing column is an InputError."""
    if not Path(path).is_file():
        raise InputError(path, "missing (the SEVIR catalog, CATALOG.csv at the top of the s3://sevir bucket)")
    try:
        cat = pd.read_csv(path, low_memory=False)
    except (OSError, ValueError, pd.errors.ParserError) as err:
        raise InputError(path, f"cannot read as CSV ({err})") from err
    missing = [c for c in CATALOG_COLUMNS if c not in cat.columns]
    if missing:
        raise InputError(path, f"lacks columns {missing} (has {list(cat.columns)[:12]})")
    times = pd.to_datetime(cat["time_utc"], errors="coerce", utc=True)
    index = pd.to_numeric(cat["file_index"], errors="coerce")
    bad = cat.index[times.isna() | index.isna() | (index < 0)]
    if len(bad):
        raise InputError(
            path, f"{len(bad)} rows with an unreadable time_utc or file_index (ids {list(cat.id[bad][:10])})"
        )
    return cat.assign(time_utc=times, file_index=index.astype(int))


def _catalog_file(path: str, file_names: Sequence[str]) -> str | None:
    """The catalog ``file_name`` that the user's file ``path`` is (its trailing components)."""
    norm = Path(path).as_posix()
    return next((name for name in file_names if norm == name or norm.endswith("/" + name)), None)


def select(
    catalog: pd.DataFrame,
    files: Sequence[str],
    windows: Mapping[str, Sequence[str]],
    *,
    event_types: Sequence[str] | None = None,
    catalog_path: str | os.PathLike = "CATALOG.csv",
) -> dict[str, pd.DataFrame]:
    """Per split, the VIL rows of the listed files with time_utc in the split's window [start, end).

    ``files`` are the user's paths of SEVIR VIL files; each must be one of the catalog's ``file_name``s
    (matched by trailing path), else InputError. The returned rows carry the user's ``path``.
    """
    vil = catalog[catalog["img_type"].astype(str).str.lower() == "vil"]
    names = sorted(set(vil["file_name"].astype(str)))
    paths = {}
    for path in files:
        name = _catalog_file(path, names)
        if name is None:
            raise InputError(path, f"is not a VIL file of the catalog {catalog_path} (no file_name ends its path)")
        paths[name] = str(path)
    rows = vil[vil["file_name"].isin(list(paths))]
    if event_types:
        rows = rows[rows["event_type"].isin(list(event_types))]
    out = {}
    for split, (start, end) in windows.items():
        lo, hi = pd.Timestamp(start, tz="UTC"), pd.Timestamp(end, tz="UTC")
        part = rows[(rows["time_utc"] >= lo) & (rows["time_utc"] < hi)]
        out[split] = part.assign(path=part["file_name"].map(paths)).sort_values(["time_utc", "id"], kind="stable")
    return out


def _h5(path: str | os.PathLike):
    return open_h5(path)


def check_files(events: Mapping[str, pd.DataFrame]) -> dict[str, np.ndarray]:
    """Open every file the selection needs (test split first), check its layout, return its ``id`` lists.

    Runs before any event is read: a missing or broken file stops the run at once, naming it.
    """
    order = [s for s in ("test", "val", "train") if s in events] + [
        s for s in events if s not in ("test", "val", "train")
    ]
    ids: dict[str, np.ndarray] = {}
    for split in order:
        for path in dict.fromkeys(events[split]["path"]):
            if path in ids:
                continue
            if not Path(path).is_file():
                raise InputError(path, f"missing (a SEVIR VIL file the {split} split needs)")
            with _h5(path) as f:
                if "vil" not in f or "id" not in f:
                    raise InputError(path, f"lacks the 'vil' or 'id' dataset (has {sorted(f)})")
                shape = f["vil"].shape
                if len(shape) != 4 or shape[-1] != FRAMES or shape[1] != shape[2] or f["vil"].dtype != np.uint8:
                    raise InputError(path, f"'vil' is {f['vil'].dtype} {shape}, want uint8 (event, 384, 384, {FRAMES})")
                if f["id"].shape[0] != shape[0]:
                    raise InputError(path, f"'id' has {f['id'].shape[0]} entries for {shape[0]} events")
                ids[path] = np.array([i.decode() if isinstance(i, bytes) else str(i) for i in f["id"][...]])
    return ids


def decode_vil(raw: np.ndarray, downsample: int) -> tuple[np.ndarray, int]:
    """(frames, y, x) float32 on the 0-254 scale from one event's raw (y, x, frame) uint8, and its missing count.

    255 becomes NaN first; a ``downsample`` x ``downsample`` block then averages its valid pixels (NaN when none
    is valid), so missing data neither reads as echo nor spreads into its neighbours.
    """
    frames = np.moveaxis(raw, -1, 0)
    missing = frames == MISSING
    values = np.where(missing, np.nan, frames.astype(np.float32))
    if downsample == 1:
        return values, int(missing.sum())
    t, h, w = values.shape
    if h % downsample or w % downsample:
        raise ValueError(f"grid {h}x{w} is not divisible by {downsample}")
    blocks = values.reshape(t, h // downsample, downsample, w // downsample, downsample)
    valid = (~missing).reshape(blocks.shape).sum(axis=(2, 4))
    total = np.nansum(blocks, axis=(2, 4))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(valid > 0, total / np.maximum(valid, 1), np.nan)
    return mean.astype(np.float32), int(missing.sum())


def read_events(
    events: pd.DataFrame, ids: Mapping[str, np.ndarray], *, downsample: int, max_missing: float
) -> Iterator[tuple[str, np.ndarray | None, int, str]]:
    """One event at a time: (id, frames (time, y, x) or None when refused, missing pixels, refusal reason).

    Reads ``vil[file_index]`` only (7 MB per event), never a whole file.
    """
    handles: dict[str, object] = {}
    try:
        for row in events.itertuples(index=False):
            file_ids = ids[row.path]
            if row.file_index >= len(file_ids) or file_ids[row.file_index] != str(row.id):
                yield str(row.id), None, 0, "catalog id does not match the file's id at file_index"
                continue
            if row.path not in handles:
                handles[row.path] = _h5(row.path)
            raw = handles[row.path]["vil"][row.file_index]
            frames, missing = decode_vil(raw, downsample)
            if missing > max_missing * raw.size:
                yield str(row.id), None, missing, f"more than {max_missing:.0%} of its pixels missing"
                continue
            yield str(row.id), frames, missing, ""
    finally:
        for handle in handles.values():
            handle.close()
