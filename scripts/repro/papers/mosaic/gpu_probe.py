"""Mosaic's training step at paper scale for benchmarks/gpu.py: 1.5 deg grid, every ERA5 channel, fair CRPS.

Built from the full-scale config (``data.era5`` gives the channel count), two ensemble members per sample.
"""

from __future__ import annotations

from repro.data.era5.names import PRESSURE_LEVEL_VARIABLES

BATCH_SIZE = 4
STAGE = "train"  # one job per variant (workflow/rules/mosaic.smk); the probe's step is the native ``mosaic`` one


def channel_count(era5: dict) -> int:
    """Channels of the canonical store: one per surface variable, one per level for each level variable."""
    levels = len(era5.get("levels", [])) or 1
    return sum(levels if v in PRESSURE_LEVEL_VARIABLES else 1 for v in era5["variables"])


def build(section: dict, device, era5: dict | None = None, grid: tuple[int, int] = (121, 240)):
    """(model, batch(size), loss) of one Mosaic step; ``era5`` defaults to the full-scale data section.

    ``grid`` (latitudes, longitudes) is WeatherBench2's 1.5 deg grid; tests pass a small one.
    """
    import numpy as np
    import torch

    from repro.papers.mosaic.model import ModelSettings, Mosaic
    from repro.papers.mosaic.train import fair_crps_loss
    from repro.workflow.config import load_config

    era5 = era5 or load_config("config/full.yaml")["data"]["era5"]
    channels = channel_count(era5)
    spec = {k: v for k, v in section["model"].items() if k != "compressive_patch"}  # the native variant
    spec["tile"] = tuple(spec.get("tile", (2, 8)))
    settings = ModelSettings(channels=channels, **spec)
    n_lat, n_lon = grid
    lat, lon = np.linspace(-90, 90, n_lat), np.arange(n_lon) * (360 / n_lon)
    model = Mosaic(settings, lat, lon).to(device)
    members = section["train"].get("members", 2)
    weights = torch.cos(torch.deg2rad(torch.as_tensor(lat, dtype=torch.float32, device=device)))[:, None]

    def batch(size: int):
        history = torch.randn(size, settings.history, channels, n_lat, n_lon, device=device)
        return history, torch.randn(size, channels, n_lat, n_lon, device=device)

    def loss(net, b):
        history, truth = b
        noise = [torch.randn(history.shape[0], settings.noise_dim, device=device) for _ in range(members)]
        return fair_crps_loss(torch.stack([net(history, z) for z in noise]), truth, weights)

    return model, batch, loss


def split_steps(era5: dict, period: tuple[str, str]) -> int:
    """Time steps of ``period`` in the canonical store: ``era5.time`` (start, end, ``step_hours``) as the data
    stage selects it (an end date alone is the whole day), then sliced by the period's dates as
    ``load_period``'s ``sel(time=slice(*period))`` does (pandas partial-date strings, both ends inclusive)."""
    import pandas as pd

    time = era5["time"]
    end = pd.Timestamp(time["end"])
    if len(str(time["end"])) <= 10:
        end += pd.Timedelta(days=1) - pd.Timedelta(1, "ns")
    times = pd.date_range(time["start"], end, freq=pd.Timedelta(hours=time.get("step_hours", 6)))
    where = times.slice_indexer(*period)
    return len(times[where])


def work(section: dict, era5: dict | None = None) -> tuple[int, int]:
    """(samples, batch) of one variant's train job, in the probe's steps (one sample: ``members`` forecasts of
    one window and their fair CRPS): ``train.epochs`` x the full batches of ``train.batch_size`` over the
    training windows (states t, t + 1 in, t + 2 .. t + 1 + ``rollout`` out: the ``splits.train`` steps of the
    store (:func:`split_steps`, from ``era5`` = the full-scale data section by default, as :func:`build`) - 1 -
    ``rollout``; the last short batch is dropped) x ``rollout`` (one forward + backward per step rolled out),
    + each epoch's validation over the ``splits.val`` windows, forward only (1/3 of a step). Batch
    ``train.batch_size``. Counts every epoch: early stopping (``patience``) can end sooner. The probe's step
    is the native variant's; ``dense`` (dense attention), ``compressive`` (``compressive_patch`` tokens) and
    ``mse`` (one forecast, not ``members``) cost otherwise per sample."""
    if era5 is None:
        from repro.workflow.config import load_config

        era5 = load_config("config/full.yaml")["data"]["era5"]
    t = section["train"]
    steps, batch = t["rollout"], t["batch_size"]
    windows = split_steps(era5, tuple(section["splits"]["train"])) - 1 - steps
    val = max(split_steps(era5, tuple(section["splits"]["val"])) - 1 - steps, 0)
    per_epoch = (windows // batch) * batch * steps + val * steps / 3
    return int(round(t["epochs"] * per_epoch)), int(batch)
