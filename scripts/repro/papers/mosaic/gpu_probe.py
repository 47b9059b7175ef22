"""Mosaic's training step at paper scale for benchmarks/gpu.py: 1.5 deg grid, every ERA5 channel, fair CRPS.

Built from the full-scale config (``data.era5`` gives the channel count), two ensemble members per sample.
"""

from __future__ import annotations

from repro.data.era5.names import PRESSURE_LEVEL_VARIABLES

BATCH_SIZE = 4


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
