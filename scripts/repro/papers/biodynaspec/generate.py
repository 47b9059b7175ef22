"""Trajectory generation: chain windows from the conditioning frame, each anchored on the last frame."""

from __future__ import annotations

import math

import numpy as np
import torch

from repro.learning.training import seed_everything
from repro.papers.biodynaspec.data import from_slots
from repro.papers.biodynaspec.iwfd import compose_windows
from repro.papers.biodynaspec.registry import MODELS, build_network


def load_model(path, settings: dict, device: torch.device | str = "cpu"):
    """Network with trained weights on ``device``, and its slot scales.

    The checkpoint holds tensors and plain data only, so it loads with ``weights_only=True``: a file from a
    shared cache cannot run code when read."""
    ckpt = torch.load(path, weights_only=True, map_location="cpu")
    net = build_network(ckpt["model"], settings)
    net.load_state_dict(ckpt["state"])
    net.eval()
    return net.to(device), np.asarray(torch.as_tensor(ckpt["scales"]).numpy(), dtype=np.float64)


def untrained_model(name: str, settings: dict, seed: int, device: torch.device | str = "cpu"):
    """The network of ``name`` as training starts from it (seeded the same way): the learning checks' trivial
    generator."""
    seed_everything(seed)
    return build_network(name, settings).eval().to(device)


def generate(
    name: str,
    net,
    scales: np.ndarray | None,
    start: np.ndarray,
    types: np.ndarray,
    num_frames: int,
    window: int,
    n_samples: int,
    seed: int,
) -> np.ndarray:
    """``n_samples`` trajectories ``[n_samples, 1 + num_frames, L, 3]`` starting at frame ``start [L, 3]``.

    Runs on the network's device; noise comes from a CPU generator, so samples do not depend on the device's
    random stream."""
    if MODELS[name].network == "none":
        return np.repeat(start[None, None], n_samples, 0).repeat(1 + num_frames, 1)
    rep = MODELS[name].representation
    generator = torch.Generator().manual_seed(seed)
    # All samples are drawn as one batch: each window of every sample is anchored on that sample's last frame.
    anchor = np.repeat(start.astype(np.float64)[None], n_samples, 0)
    device = next(net.parameters()).device
    batch_types = torch.as_tensor(np.repeat(types[None], n_samples, 0), device=device)
    deltas = []
    for _ in range(math.ceil(num_frames / window)):
        cond = torch.as_tensor(anchor, dtype=torch.float32, device=device)
        slots = net.sample(cond, batch_types, generator).cpu().numpy()
        delta = np.stack([from_slots(x * scales[:, None, None], rep, window) for x in slots])
        deltas.append(delta)
        anchor = anchor + delta[:, -1]
    windows = np.stack(deltas, axis=1)  # (samples, windows, W, L, 3)
    return np.stack([compose_windows(start, w)[: 1 + num_frames] for w in windows])
