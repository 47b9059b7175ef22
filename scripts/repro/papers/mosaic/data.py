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


# A period up to this size is read once and indexed in memory (the embedded default's is a few MB, and a read
# from the store costs tens of ms); a larger one is read per request.
IN_MEMORY_MB = 4096


class PeriodStates:
    """Normalised states of one period, ``states[index]``: held in memory when the period is small, else read
    from the store per request, never whole (the paper-scale training period, 1979-2018 at 1.5 deg and 82
    channels, is 556 GB as float32)."""

    def __init__(
        self,
        store: str | Path,
        norm_stats: str | Path,
        period: tuple[str, str],
        channels: list[str] | None = None,
        in_memory_mb: float = IN_MEMORY_MB,
    ):
        stats = load_norm_stats(norm_stats)
        names = [str(c) for c in stats["channels"]]
        self.channels = channels or names
        index = [names.index(c) for c in self.channels]
        # without dask: a read of a few time steps is then one zarr read per variable, not a task graph
        self.ds = xr.open_zarr(store, chunks=None).sel(time=slice(*period))
        if self.ds.sizes["time"] < 3:
            raise InputError(store, f"period {period} holds {self.ds.sizes['time']} time steps; need at least 3")
        self.mean, self.std = stats["state_mean"][index], stats["state_std"][index]
        self.times = pd.DatetimeIndex(self.ds["time"].values)
        self.latitude, self.longitude = self.ds["latitude"].values, self.ds["longitude"].values
        size_mb = len(self.times) * len(self.channels) * len(self.latitude) * len(self.longitude) * 4 / 2**20
        self._held = self._read(np.arange(len(self.times))) if size_mb <= in_memory_mb else None

    @property
    def streamed(self) -> bool:
        """Whether requests read the store (the period is larger than ``in_memory_mb``)."""
        return self._held is None

    def __len__(self) -> int:
        return len(self.times)

    def __getitem__(self, index: np.ndarray) -> np.ndarray:
        """(len(index), channel, lat, lon) float32 states at the time indices ``index`` (any order, repeats)."""
        return self._read(index) if self._held is None else self._held[np.asarray(index)]

    def _read(self, index: np.ndarray) -> np.ndarray:
        unique, inverse = np.unique(np.asarray(index), return_inverse=True)
        raw = stacked(self.ds.isel(time=unique), self.channels)[inverse.reshape(-1)]
        states = (raw - self.mean[None, :, None, None]) / self.std[None, :, None, None]
        return states.astype(np.float32)

    def time_mean(self, chunk: int = 64) -> np.ndarray:
        """Mean state over the period, read ``chunk`` states at a time: the same float32 sum in the same order
        as ``states.mean(axis=0)`` of the whole array (each state added to the running total in turn)."""
        total = None
        for start in range(0, len(self), chunk):
            block = self[np.arange(start, min(start + chunk, len(self)))]
            total = np.add.reduce(block if total is None else np.concatenate([total[None], block]), axis=0)
        # divided as numpy's mean divides (by an intp count, into the float32 total)
        return np.true_divide(total, np.intp(len(self)), out=total, casting="unsafe")


def load_period(
    store: str | Path, norm_stats: str | Path, period: tuple[str, str], channels: list[str] | None = None
) -> Fields:
    """States of ``period`` (inclusive dates), normalised with the store's statistics, all in memory (the
    evaluation's test year: 14 GB at paper scale; training reads :class:`PeriodStates` per batch)."""
    period_states = PeriodStates(store, norm_stats, period, channels, in_memory_mb=0)
    return Fields(
        period_states[np.arange(len(period_states))],
        period_states.times,
        period_states.channels,
        period_states.mean,
        period_states.std,
        period_states.latitude,
        period_states.longitude,
    )
