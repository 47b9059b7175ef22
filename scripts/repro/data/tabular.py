"""Real tabular data with natural groups or shifts, read from shapiq==1.4.1's package files.

- ``shapiq/datasets/data/adult_census.csv`` (UCI Adult, 48,842 people): label income > 50K, natural
  groups by sex and race (group-robustness benchmarks);
- ``shapiq/datasets/data/california_housing.csv`` (20,640 districts): target median house value,
  region north/south of latitude 36 (a geographic shift for regression).

Categorical columns are one-hot encoded (sorted categories, so the encoding is the same on every run);
numeric columns are returned raw: a paper standardises with statistics of its own training split.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from repro.workflow.io import InputError

ADULT_MEMBER = "shapiq/datasets/data/adult_census.csv"
CALIFORNIA_MEMBER = "shapiq/datasets/data/california_housing.csv"
ADULT_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
ADULT_CATEGORICAL = [
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native-country",
]
CALIFORNIA_FEATURES = ["MedInc", "HouseAge", "AveRooms", "AveBedrms", "Population", "AveOccup", "Latitude", "Longitude"]


@dataclass
class TabularSet:
    """Features (float32, N x D), target (int64 labels or float32 values), named feature columns and
    per-row attributes (integer codes) that define groups or shifts for evaluation."""

    x: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    attributes: dict[str, np.ndarray]


def read_table(path: Path, columns: list[str]) -> pd.DataFrame:
    """A CSV table that must hold ``columns``; unreadable files and missing columns are named."""
    try:
        table = pd.read_csv(path, skipinitialspace=True)
    except (OSError, ValueError, pd.errors.ParserError) as err:
        raise InputError(path, f"cannot read the table ({err})") from err
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise InputError(path, f"lacks columns {missing}")
    return table


def read_adult(folder: str | Path, drop: tuple[str, ...] = ()) -> TabularSet:
    """UCI Adult: y = income > 50K; attributes ``sex`` (1 = Male) and ``race`` (index in sorted race names).
    ``drop`` removes columns (e.g. the group attributes) from the features; rows with a missing value go."""
    path = Path(folder) / ADULT_MEMBER
    table = read_table(path, [*ADULT_NUMERIC, *ADULT_CATEGORICAL, "class"])
    table = table.replace("?", np.nan).dropna(subset=[*ADULT_NUMERIC, *ADULT_CATEGORICAL, "class"])
    income = table["class"].astype(str).str.rstrip(".")
    if not set(income.unique()) <= {"<=50K", ">50K"}:
        raise InputError(path, f"class must be <=50K or >50K, found {sorted(income.unique())[:5]}")
    numeric = [c for c in ADULT_NUMERIC if c not in drop]
    categorical = [c for c in ADULT_CATEGORICAL if c not in drop]
    onehot = pd.get_dummies(table[categorical].astype(str), prefix_sep="=", dtype=np.float32)
    onehot = onehot[sorted(onehot.columns)]
    features = pd.concat([table[numeric].astype(np.float32), onehot], axis=1)
    races = sorted(table["race"].astype(str).unique())
    attributes = {
        "sex": (table["sex"].astype(str) == "Male").to_numpy(np.int64),
        "race": table["race"].astype(str).map({r: i for i, r in enumerate(races)}).to_numpy(np.int64),
    }
    return TabularSet(
        features.to_numpy(np.float32), (income == ">50K").to_numpy(np.int64), list(features.columns), attributes
    )


def read_california(folder: str | Path, north_of: float = 36.0) -> TabularSet:
    """California housing: y = median house value (100k USD); attribute ``north`` = latitude > ``north_of``."""
    path = Path(folder) / CALIFORNIA_MEMBER
    table = read_table(path, [*CALIFORNIA_FEATURES, "MedHouseVal"])
    if table[[*CALIFORNIA_FEATURES, "MedHouseVal"]].isna().any().any():
        raise InputError(path, "has missing values")
    return TabularSet(
        table[CALIFORNIA_FEATURES].to_numpy(np.float32),
        table["MedHouseVal"].to_numpy(np.float32),
        list(CALIFORNIA_FEATURES),
        {"north": (table["Latitude"] > north_of).to_numpy(np.int64)},
    )
