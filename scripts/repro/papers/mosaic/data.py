"""Canonical ERA5 store -> normalised (time, channel, latitude, longitude) arrays, split by date."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from repro.workflow.io import InputError


@dataclass
class Fields:
    """Normalised states of one period with what is needed to undo the normalisation."""

    states: np.ndarray  # (time, channel, lat, lon) float32, normalised
    times: pd.DatetimeIndex
    channels: list[str]
    mean: np.ndarray  # (channel,)
    std: np.ndarray
    latitude: np.ndarray
    longitude: np.ndarray

    def physical(self, normalised: np.ndarray, channel_axis: int) -> np.ndarray:
        shape = [1] * normalised.ndim
        shape[channel_axis] = -1
        return normalised * self.std.reshape(shape) + self.mean.reshape(shape)


def load_norm_stats(path: str | Path) -> dict[str, np.ndarray]:
    stats = dict(np.load(path))
    for key in ("state_mean", "state_std", "channels"):
        if key not in stats:
            raise InputError(path, f"normalisation statistics lack {key!r}")
    if np.any(stats["state_std"] <= 0):
        raise InputError(path, "a channel has zero standard deviation")
    return stats


def stacked(ds: xr.Dataset, channels: list[str]) -> np.ndarray:
    """(time, channel, lat, lon) in ``channels`` order from WB2 variables (``name_level`` for level variables)."""
    out = []
    for name in channels:
        if name in ds.data_vars:
            out.append(ds[name].values)
            continue
        var, _, level = name.rpartition("_")
        if var not in ds.data_vars or "level" not in ds[var].dims:
            raise InputError(ds.encoding.get("source", "era5 store"), f"no channel {name!r}")
        out.append(ds[var].sel(level=float(level)).values)
    return np.stack(out, axis=1).astype(np.float32)


def load_period(
    store: str | Path, norm_stats: str | Path, period: tuple[str, str], channels: list[str] | None = None
) -> Fields:
    """States of ``period`` (inclusive dates), normalised with the store's statistics."""
    stats = load_norm_stats(norm_stats)
    names = [str(c) for c in stats["channels"]]
    channels = channels or names
    index = [names.index(c) for c in channels]
    ds = xr.open_zarr(store).sel(time=slice(*period))
    if ds.sizes["time"] < 3:
        raise InputError(store, f"period {period} holds {ds.sizes['time']} time steps; need at least 3")
    mean, std = stats["state_mean"][index], stats["state_std"][index]
    raw = stacked(ds, channels)
    states = (raw - mean[None, :, None, None]) / std[None, :, None, None]
    return Fields(
        states.astype(np.float32),
        pd.DatetimeIndex(ds["time"].values),
        channels,
        mean,
        std,
        ds["latitude"].values,
        ds["longitude"].values,
    )
