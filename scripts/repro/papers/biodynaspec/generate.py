"""Trajectory generation: chain windows from the conditioning frame, each anchored on the last frame."""

from __future__ import annotations

import math

import numpy as np
import torch

from repro.papers.biodynaspec.data import from_slots
from repro.papers.biodynaspec.iwfd import compose_windows
from repro.papers.biodynaspec.registry import MODELS, build_network


def load_model(path, settings: dict):
    """Network with trained weights, and its slot scales."""
    ckpt = torch.load(path, weights_only=False)
    net = build_network(ckpt["model"], settings)
    net.load_state_dict(ckpt["state"])
    net.eval()
    return net, np.asarray(ckpt["scales"])


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
    """``n_samples`` trajectories ``[n_samples, 1 + num_frames, L, 3]`` starting at frame ``start [L, 3]``."""
    if MODELS[name].network == "none":
        return np.repeat(start[None, None], n_samples, 0).repeat(1 + num_frames, 1)
    rep = MODELS[name].representation
    generator = torch.Generator().manual_seed(seed)
    trajs = []
    for _ in range(n_samples):
        anchor, deltas = start.astype(np.float64), []
        for _ in range(math.ceil(num_frames / window)):
            slots = net.sample(
                torch.as_tensor(anchor[None], dtype=torch.float32), torch.as_tensor(types[None]), generator
            )[0].numpy()
            delta = from_slots(slots * scales[:, None, None], rep, window)
            deltas.append(delta)
            anchor = anchor + delta[-1]
        trajs.append(compose_windows(start, np.stack(deltas))[: 1 + num_frames])
    return np.stack(trajs)
