"""Load the canonical metagenome data of one complexity level into tensors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from repro.papers.hysomi.observations import read_observations
from repro.papers.hysomi.soil_model import PARAMS, STATES
from repro.workflow.io import InputError

SPLITS = ("train", "val", "test")


@dataclass
class Split:
    """Samples of one split: standardised traits, initial states, observations and their mask."""

    ids: list[str]
    traits: torch.Tensor  # (N, n_traits), z-scored with train statistics
    x0: torch.Tensor  # (N, 5)
    value: torch.Tensor  # (N, T, 5), NaN where unobserved
    observed: torch.Tensor  # (N, T, 5) bool
    truth: torch.Tensor | None  # (N, T, 5) noise-free states (synthetic data only)


@dataclass
class LevelData:
    times: list[float]
    trait_names: list[str]
    splits: dict[str, Split]
    state_scale: torch.Tensor  # (5,) train-set sd of each observed state (1 where unobserved)
    observed_states: list[str]


def load_level(traits_path: str | Path, observations_path: str | Path, level: str) -> LevelData:
    """Read one complexity level; z-score traits with train statistics only."""
    table = pd.read_parquet(traits_path)
    table = table[table["complexity"] == level]
    if table.empty:
        raise InputError(traits_path, f"no samples of complexity {level!r}")
    trait_names = [c for c in table.columns if c not in ("sample_id", "split", "complexity") and table[c].notna().all()]
    obs = read_observations(observations_path, table["sample_id"].tolist())
    if list(obs["state"]) != list(STATES):
        raise InputError(observations_path, f"states {list(obs['state'])} differ from {list(STATES)}")
    train = table["split"] == "train"
    mean = table.loc[train, trait_names].mean()
    sd = table.loc[train, trait_names].std().replace(0.0, 1.0)
    z = ((table[trait_names] - mean) / sd).to_numpy()
    value = obs["value"]
    observed = obs["observed"]
    truth = obs.get("truth")
    x0 = obs["x0"]
    scale = np.ones(len(STATES))
    train_idx = np.flatnonzero(train.to_numpy())
    for s in range(len(STATES)):
        vals = value[train_idx, :, s][observed[train_idx, :, s]]
        if vals.size > 1:
            scale[s] = vals.std()
    splits = {}
    for name in SPLITS:
        idx = np.flatnonzero((table["split"] == name).to_numpy())
        splits[name] = Split(
            ids=table["sample_id"].to_numpy()[idx].tolist(),
            traits=torch.tensor(z[idx], dtype=torch.float64),
            x0=torch.tensor(x0[idx], dtype=torch.float64),
            value=torch.tensor(np.nan_to_num(value[idx]), dtype=torch.float64),
            observed=torch.tensor(observed[idx]),
            truth=None if truth is None else torch.tensor(truth[idx], dtype=torch.float64),
        )
    observed_states = [s for i, s in enumerate(STATES) if observed[:, :, i].any()]
    return LevelData(
        times=[float(t) for t in obs["time"]],
        trait_names=trait_names,
        splits=splits,
        state_scale=torch.tensor(scale, dtype=torch.float64),
        observed_states=observed_states,
    )


def true_params(path: str | Path, ids: list[str]) -> np.ndarray:
    """True parameters (synthetic data) of ``ids`` in PARAMS order, shape (N, 8)."""
    table = pd.read_parquet(path).set_index("sample_id")
    return table.loc[ids, list(PARAMS)].to_numpy(float)


def take(split: Split, index: np.ndarray) -> Split:
    """The samples ``index`` of a split, in that order."""
    idx = torch.as_tensor(np.asarray(index))
    return Split(
        ids=[split.ids[i] for i in np.asarray(index)],
        traits=split.traits[idx],
        x0=split.x0[idx],
        value=split.value[idx],
        observed=split.observed[idx],
        truth=None if split.truth is None else split.truth[idx],
    )
