"""Train/val/test split lists of ATLAS by PDB release date (AlphaFlow/MDGen protocol).

The shipped lists (``resources/atlas/atlas_val.csv``, ``atlas_test.csv``) come from
AlphaFlow's ``splits/`` folder (MIT); the train list is every other ATLAS chain released
up to the train cut-off, rebuilt here from ATLAS metadata (name, release date).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from repro.workflow.io import InputError

TRAIN_END = "2018-04-25"
VAL_START, VAL_END = "2018-05-23", "2019-04-10"
TEST_START, TEST_END = "2019-05-01", "2022-03-30"
SPLITS = ("train", "val", "test")


def split_by_release_date(metadata: pd.DataFrame) -> dict[str, list[str]]:
    """Assign chains (columns ``name``, ``release_date``) to train/val/test by the published date ranges.

    Chains released between the ranges belong to no split, as in the published lists.
    """
    if not {"name", "release_date"} <= set(metadata.columns):
        raise ValueError("metadata needs columns name and release_date")
    date = pd.to_datetime(metadata["release_date"]).dt.strftime("%Y-%m-%d")
    masks = {
        "train": date <= TRAIN_END,
        "val": (date >= VAL_START) & (date <= VAL_END),
        "test": (date >= TEST_START) & (date <= TEST_END),
    }
    return {split: sorted(metadata.loc[mask, "name"]) for split, mask in masks.items()}


def read_split(path: Path) -> list[str]:
    """Names of one shipped split csv (column ``name``)."""
    try:
        table = pd.read_csv(path)
    except (OSError, pd.errors.ParserError) as err:
        raise InputError(path, f"cannot read split list ({err})") from err
    if "name" not in table.columns:
        raise InputError(path, "split list has no 'name' column")
    return list(table["name"])
