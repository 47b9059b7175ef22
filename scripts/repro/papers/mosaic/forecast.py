"""Autoregressive ensemble rollouts and the WB2 forecast layout (time, member, prediction_timedelta, level, lat, lon)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
import xarray as xr

from repro.papers.mosaic.model import ModelSettings, Mosaic
from repro.workflow.io import InputError, atomic_path


def load_model(path, latitude: np.ndarray, longitude: np.ndarray) -> tuple[Mosaic, dict]:
    """A trained model from its file: tensors and plain data only (weights_only=True), so a file from a shared
    cache cannot run code when read."""
    try:
        saved = torch.load(path, weights_only=True, map_location="cpu")
    except Exception as err:  # torch raises UnpicklingError and others for anything but tensors and plain data
        raise InputError(path, f"not a model file of tensors and plain data ({type(err).__name__}: {err})") from err
    settings = dict(saved["settings"])
    settings["tile"] = tuple(settings["tile"])
    if isinstance(settings.get("patch"), list):
        settings["patch"] = tuple(settings["patch"])
    model = Mosaic(ModelSettings(**settings), latitude, longitude)
    model.load_state_dict(saved["state"])
    model.eval()
    return model, saved


@torch.no_grad()
def rollout(model: Mosaic, states: np.ndarray, inits: np.ndarray, steps: int, members: int, seed: int) -> np.ndarray:
    """Normalised forecasts (init, member, lead, C, lat, lon); each member draws fresh noise every step."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.tensor(states)
    history = torch.stack([x[inits - 1], x[inits]], dim=1).repeat_interleave(members, dim=0)
    out = []
    for _ in range(steps):
        z = torch.randn(history.shape[0], model.s.noise_dim, generator=generator) if model.s.noise_dim else None
        pred = model(history, z)
        out.append(pred.numpy())
        history = torch.stack([history[:, 1], pred], dim=1)
    arr = np.stack(out, axis=1)
    return arr.reshape(len(inits), members, *arr.shape[1:])


def persistence(states: np.ndarray, inits: np.ndarray, steps: int) -> np.ndarray:
    return np.repeat(states[inits][:, None, None], steps, axis=2)


def climatology(mean_state: np.ndarray, n_inits: int, steps: int) -> np.ndarray:
    return np.broadcast_to(mean_state, (n_inits, 1, steps) + mean_state.shape).copy()


def truth_windows(states: np.ndarray, inits: np.ndarray, steps: int) -> np.ndarray:
    """(init, lead, C, lat, lon): the verifying states at leads 1..steps."""
    return np.stack([states[inits + 1 + s] for s in range(steps)], axis=1)


def to_dataset(
    forecast: np.ndarray,
    channels: list[str],
    init_times: pd.DatetimeIndex,
    step_hours: int,
    latitude: np.ndarray,
    longitude: np.ndarray,
) -> xr.Dataset:
    """WB2 forecast layout; ``name_level`` channels become a ``level`` dimension of ``name``."""
    leads = pd.to_timedelta(np.arange(1, forecast.shape[2] + 1) * step_hours, unit="h")
    coords = {
        "time": init_times,
        "member": np.arange(forecast.shape[1]),
        "prediction_timedelta": leads,
        "latitude": latitude,
        "longitude": longitude,
    }
    groups: dict[str, list[tuple[float | None, int]]] = {}
    for i, name in enumerate(channels):
        var, _, level = name.rpartition("_")
        if var and level.isdigit():
            groups.setdefault(var, []).append((float(level), i))
        else:
            groups.setdefault(name, []).append((None, i))
    data = {}
    levels = sorted({lev for items in groups.values() for lev, _ in items if lev is not None})
    for var, items in groups.items():
        if items[0][0] is None:
            data[var] = (
                ("time", "member", "prediction_timedelta", "latitude", "longitude"),
                forecast[:, :, :, items[0][1]],
            )
        else:
            cube = np.full(forecast.shape[:3] + (len(levels),) + forecast.shape[-2:], np.nan, np.float32)
            for lev, i in items:
                cube[:, :, :, levels.index(lev)] = forecast[:, :, :, i]
            data[var] = (("time", "member", "prediction_timedelta", "level", "latitude", "longitude"), cube)
    if levels:
        coords["level"] = levels
    return xr.Dataset(data, coords=coords)


def write_forecast(ds: xr.Dataset, path) -> None:
    chunks = {name: {"chunks": (1,) + ds[name].shape[1:]} for name in ds.data_vars}
    with atomic_path(path) as tmp:
        ds.astype(np.float32).to_zarr(tmp, mode="w", encoding=chunks, consolidated=True, zarr_format=3)
