"""Metagenome traits and incubation time series in one canonical layout (``data/metagenome/``).

Two producers end in the same files, so HySoMi cannot tell them apart:
- ``embedded``: the paper's own kind of benchmark, simulated from a seed: correlated trait matrices,
  a hidden trait-to-parameter mapping at three complexity levels, the soil model integrated with the
  true parameters, multiplicative log-normal noise, and a mask of the observed states;
- ``local``: user files (a samples x traits table, e.g. microTrait output aggregated per sample, and a
  long table of observed states), validated with errors that name the file and the problem.

Canonical outputs: ``traits.parquet`` (sample_id, split, complexity, trait columns), ``observations.zarr``
(dims sample, time, state; ``value`` with NaN where not measured, ``observed`` mask, ``x0`` initial states,
``truth`` noise-free states for synthetic data), ``params_true.parquet``, ``constraints.yaml``, ``manifest.json``.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
import xarray as xr

from repro.papers.hysomi.soil_model import PARAMS, SIM_DT, STATES, Bounds, simulate
from repro.workflow.io import InputError, atomic_path, sha256, write_json

TRAITS = (
    "genome_size",
    "rrn_copies",
    "min_gen_time",
    "gc_content",
    "n_transporters_sugar",
    "n_transporters_aa",
    "n_cazymes",
    "n_peptidases",
    "stress_osmotic",
    "stress_oxidative",
    "opt_temp",
    "motility",
)
COUNT_TRAITS = ("rrn_copies", "n_transporters_sugar", "n_transporters_aa", "n_cazymes", "n_peptidases")
N_IRRELEVANT = 6
X0_MEAN = {"SOC": 20.0, "DOC": 0.1, "MBC": 0.4, "ENZ": 0.01, "CO2": 0.0}
# The generator draws each parameter from a window of width 0.4 (unit scale) inside the literature bounds, so
# that truth never sits on a bound the network cannot reach. The window's centre is drawn per parameter (from
# GEN_CENTRE_RANGE, seeded) rather than put at the bounds' midpoint: every model starts at the midpoint, and a
# truth centred there handed each of them the population's centre before any training (a global calibration
# then had nothing left to learn).
GEN_WINDOW = 0.4
GEN_CENTRE_RANGE = (0.3, 0.7)
SPLITS = ("train", "val", "test")


def _traits(rng: np.random.Generator, n: int) -> tuple[np.ndarray, pd.DataFrame]:
    """Correlated standard-normal latent traits and their microTrait-like rendering."""
    k = len(TRAITS)
    a = rng.normal(size=(k, k))
    cov = a @ a.T / k + 0.5 * np.eye(k)
    sd = np.sqrt(np.diag(cov))
    corr = cov / np.outer(sd, sd)
    z = rng.multivariate_normal(np.zeros(k), corr, size=n)
    softplus = np.log1p(np.exp(z))
    table = {}
    for j, name in enumerate(TRAITS):
        if name in COUNT_TRAITS:
            table[name] = np.round(3.0 * softplus[:, j]).astype(float)
        elif name == "genome_size":
            table[name] = 2.0 + 2.0 * softplus[:, j]
        elif name == "gc_content":
            table[name] = 0.35 + 0.35 / (1.0 + np.exp(-z[:, j]))
        elif name == "opt_temp":
            table[name] = 25.0 + 5.0 * softplus[:, j]
        else:
            table[name] = softplus[:, j]
    return z, pd.DataFrame(table)


def _hidden_logits(rng: np.random.Generator, z: np.ndarray, level: str) -> np.ndarray:
    """Trait-to-parameter mapping (logit scale) of one complexity level.

    L1: linear in 4 traits; L2 and L3: products, sines and thresholds of 6 traits.
    """
    n_par = len(PARAMS)
    if level == "L1":
        w = rng.normal(scale=0.8, size=(4, n_par))
        return z[:, :4] @ w
    w_lin = rng.normal(scale=0.5, size=(6, n_par))
    w_nl = rng.normal(scale=0.6, size=(3, n_par))
    features = np.stack([z[:, 0] * z[:, 1], np.sin(1.5 * z[:, 2]), np.where(z[:, 3] > 0.3, 1.0, -1.0)], axis=1)
    return z[:, 4:10] @ w_lin + features @ w_nl


def generate(section: dict[str, Any], bounds: Bounds) -> tuple[pd.DataFrame, xr.Dataset, pd.DataFrame]:
    """Simulate the synthetic benchmark: traits, observations (with truth) and true parameters."""
    rng = np.random.default_rng(section["seed"])
    centres = np.random.default_rng([int(section["seed"]), 1]).uniform(*GEN_CENTRE_RANGE, size=len(PARAMS))
    window_lo = centres - GEN_WINDOW / 2
    n = section["n_samples"]
    times = [float(t) for t in section["obs_days"]]
    traits_frames, datasets, params_frames = [], [], []
    for level in section["complexity"]:
        z, traits = _traits(rng, n)
        logits = _hidden_logits(rng, z, level)
        if level == "L3":
            irrelevant = rng.normal(size=(n, N_IRRELEVANT))
            for j in range(N_IRRELEVANT):
                traits[f"irrelevant_{j + 1}"] = irrelevant[:, j]
            traits[list(TRAITS)] = traits[list(TRAITS)] * rng.lognormal(0.0, 0.1, size=(n, len(TRAITS)))
            traits[list(COUNT_TRAITS)] = traits[list(COUNT_TRAITS)].round()  # a noisy count is still a count
        unit = window_lo + GEN_WINDOW / (1.0 + np.exp(-logits))
        theta = bounds.from_unit(torch.tensor(unit, dtype=torch.float64))
        x0 = torch.tensor([[X0_MEAN[s] for s in STATES]], dtype=torch.float64) * torch.tensor(
            rng.uniform(0.9, 1.1, size=(n, len(STATES)))
        )
        truth = simulate(x0, theta, times, SIM_DT, bounds.f_s).numpy()
        observed = np.zeros((n, len(times), len(STATES)), bool)
        for s in section["observed_states"]:
            observed[:, :, STATES.index(s)] = True
        noisy = truth * rng.lognormal(0.0, section["noise_sd"], size=truth.shape)
        value = np.where(observed, noisy, np.nan)
        ids = [f"{level}_{i:04d}" for i in range(n)]
        fractions = np.asarray(section["split_fractions"], float)
        counts = np.floor(fractions / fractions.sum() * n).astype(int)
        counts[0] += n - counts.sum()
        split = np.repeat(SPLITS, counts)[rng.permutation(n)]
        traits.insert(0, "sample_id", ids)
        traits.insert(1, "split", split)
        traits.insert(2, "complexity", level)
        traits_frames.append(traits)
        params = pd.DataFrame(theta.numpy(), columns=PARAMS)
        params.insert(0, "sample_id", ids)
        params.insert(1, "complexity", level)
        params_frames.append(params)
        datasets.append(_observations(ids, times, value, observed, x0.numpy(), truth))
    return (
        pd.concat(traits_frames, ignore_index=True),
        xr.concat(datasets, dim="sample"),
        pd.concat(params_frames, ignore_index=True),
    )


def _observations(ids, times, value, observed, x0, truth=None) -> xr.Dataset:
    data = {
        "value": (("sample", "time", "state"), value.astype(np.float64)),
        "observed": (("sample", "time", "state"), observed),
        "x0": (("sample", "state"), x0.astype(np.float64)),
    }
    if truth is not None:
        data["truth"] = (("sample", "time", "state"), truth.astype(np.float64))
    ds = xr.Dataset(
        data,
        coords={
            "sample": np.asarray(ids, dtype=object),
            "time": np.asarray(times, float),
            "state": np.asarray(STATES, dtype=object),
        },
    )
    # No CF 'units' on time: xarray would decode "days" into timedeltas; days are plain floats here.
    ds["value"].attrs = {"units": "mg C g-1 soil", "note": "CO2 is cumulative from the start of the incubation"}
    ds["time"].attrs = {"long_name": "incubation time in days"}
    return ds


def _read_table(path: str | Path) -> pd.DataFrame:
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file does not exist")
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path, sep="\t" if path.suffix in (".tsv", ".tab") else ",")
    except Exception as err:  # pandas/pyarrow raise many types for a malformed file
        raise InputError(path, f"cannot be read as a table ({err})") from err


def _require_columns(df: pd.DataFrame, path: str | Path, columns: list[str]) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(path, f"missing column(s) {missing}; found {list(df.columns)}")


def read_local(section: dict[str, Any], seed: int) -> tuple[pd.DataFrame, xr.Dataset]:
    """Validate user files and turn them into the canonical traits table and observations."""
    traits_path, obs_path = section["traits"], section["observations"]
    traits = _read_table(traits_path)
    _require_columns(traits, traits_path, ["sample_id"])
    if traits["sample_id"].duplicated().any():
        dup = traits.loc[traits["sample_id"].duplicated(), "sample_id"].iloc[0]
        raise InputError(traits_path, f"sample_id {dup!r} appears more than once")
    trait_cols = [c for c in traits.columns if c not in ("sample_id", "split", "complexity")]
    if not trait_cols:
        raise InputError(traits_path, "no trait columns besides sample_id")
    for col in trait_cols:
        numeric = pd.to_numeric(traits[col], errors="coerce")
        bad = numeric.isna() & traits[col].notna() | traits[col].isna()
        if bad.any():
            row = traits.loc[bad, "sample_id"].iloc[0]
            raise InputError(
                traits_path, f"trait {col!r} of sample {row!r} is not a number ({traits.loc[bad, col].iloc[0]!r})"
            )
        if (numeric < 0).any():
            row = traits.loc[numeric < 0, "sample_id"].iloc[0]
            raise InputError(
                traits_path, f"trait {col!r} of sample {row!r} is negative ({numeric[numeric < 0].iloc[0]})"
            )
        traits[col] = numeric.astype(float)

    obs = _read_table(obs_path)
    _require_columns(obs, obs_path, ["sample_id", "time", "state", "value"])
    unknown_states = sorted(set(obs["state"]) - set(STATES))
    if unknown_states:
        raise InputError(obs_path, f"unknown state(s) {unknown_states}; expected some of {list(STATES)}")
    unknown = sorted(set(obs["sample_id"]) - set(traits["sample_id"]))
    if unknown:
        raise InputError(obs_path, f"sample(s) {unknown[:5]} not in the traits table {traits_path}")
    for col in ("time", "value"):
        numeric = pd.to_numeric(obs[col], errors="coerce")
        if numeric.isna().any():
            i = numeric.isna().idxmax()
            raise InputError(obs_path, f"{col} in row {i + 2} is not a number ({obs.loc[i, col]!r})")
        if (numeric < 0).any():
            i = (numeric < 0).idxmax()
            raise InputError(obs_path, f"{col} in row {i + 2} is negative ({numeric[i]})")
        obs[col] = numeric.astype(float)

    ids = list(traits["sample_id"])
    times = sorted(obs["time"].unique())
    value = np.full((len(ids), len(times), len(STATES)), np.nan)
    index = {s: i for i, s in enumerate(ids)}
    t_index = {t: i for i, t in enumerate(times)}
    for row in obs.itertuples(index=False):
        value[index[row.sample_id], t_index[row.time], STATES.index(row.state)] = row.value
    observed = np.isfinite(value)
    x0 = np.array([[X0_MEAN[s] for s in STATES]] * len(ids))
    if times[0] == 0.0:
        x0 = np.where(observed[:, 0, :], value[:, 0, :], x0)
    if "split" in section and section.get("splits"):
        splits = _read_table(section["splits"]).set_index("sample_id")["split"]
        traits["split"] = traits["sample_id"].map(splits)
    if "split" not in traits or traits["split"].isna().any():
        rng = np.random.default_rng(seed)
        n = len(ids)
        counts = np.floor(np.array([0.7, 0.15, 0.15]) * n).astype(int)
        counts[0] += n - counts.sum()
        traits["split"] = np.repeat(SPLITS, counts)[rng.permutation(n)]
    if "complexity" not in traits:
        traits["complexity"] = "real"
    traits = traits[["sample_id", "split", "complexity"] + trait_cols]
    return traits, _observations(ids, times, value, observed, x0)


def main(job) -> None:
    """Rule entry: write the canonical metagenome data set (embedded simulation or local files)."""
    section = job.params.section
    bounds = Bounds.from_yaml(job.input.constraints)
    if section["source"] == "embedded":
        traits, observations, params = generate(section["embedded"], bounds)
        settings = section["embedded"]
    else:
        traits, observations = read_local(section["local"], job.params.seed)
        params = pd.DataFrame(columns=["sample_id", "complexity", *PARAMS])
        settings = section["local"]
    out = job.output
    with atomic_path(out.traits) as tmp:
        traits.to_parquet(tmp, index=False)
    with atomic_path(out.params_true) as tmp:
        params.to_parquet(tmp, index=False)
    with atomic_path(out.observations) as tmp:
        observations.to_zarr(tmp, mode="w", consolidated=True, zarr_format=3)
    with atomic_path(out.constraints) as tmp:
        shutil.copyfile(job.input.constraints, tmp)
    write_json(
        out.manifest,
        {
            "source": section["source"],
            "settings": settings,
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "samples": int(traits.shape[0]),
            "complexity": sorted(traits["complexity"].unique().tolist()),
            "files": {
                name: {"path": str(getattr(out, name)), "sha256": sha256(Path(getattr(out, name)))}
                for name in ("traits", "observations", "params_true", "constraints")
            },
            "licence": "synthetic (generated by this workflow)" if section["source"] == "embedded" else "user data",
        },
    )
