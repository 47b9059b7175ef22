"""Simulated spike trains from a Poisson GLM with exponential nonlinearity and exponential-decay couplings.

rate_n(t) = exp(b_n + sum_m W_nm h_m(t)), h_m(t) = sum_{s=1..L} exp(-(s - 1) / decay) x_m(t - s):
a causal filter of past spikes. The first ``n_observed`` neurons are observed, the rest hidden.
"""

from __future__ import annotations

import numpy as np

from repro.workflow.io import InputError


def coupling_kernel(decay: float, length: int) -> np.ndarray:
    """Exponential-decay filter, kernel[s - 1] weighs the spike s bins back."""
    return np.exp(-np.arange(length) / decay)


def history(spikes: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Filtered past spikes h (time, neuron) of a (time, neuron) array; h[t] uses spikes[< t] only."""
    t_len = spikes.shape[0]
    out = np.zeros(spikes.shape, dtype=float)
    for s, weight in enumerate(kernel, start=1):
        if s < t_len:
            out[s:] += weight * spikes[:-s]
    return out


def simulate_glm(
    rng: np.random.Generator,
    n_observed: int,
    n_hidden: int,
    n_bins: int,
    decay: float,
    kernel_length: int,
    max_rate: float,
) -> dict[str, np.ndarray]:
    """Draw weights, biases and spikes; returns arrays for the canonical npz (spikes int16)."""
    n = n_observed + n_hidden
    weights = rng.normal(0.0, 0.4, size=(n, n)) * (rng.random((n, n)) < 0.5)
    np.fill_diagonal(weights, -1.0)
    weights[:n_observed, n_observed:] = rng.normal(0.0, 0.8, size=(n_observed, n_hidden))
    bias = np.log(rng.uniform(0.1, 0.4, size=n))
    kernel = coupling_kernel(decay, kernel_length)
    spikes = np.zeros((n_bins, n), dtype=np.int16)
    for t in range(n_bins):
        lo = max(0, t - kernel_length)
        past = spikes[lo:t][::-1].astype(float)
        drive = kernel[: past.shape[0]] @ past if past.size else np.zeros(n)
        rate = np.minimum(np.exp(bias + weights @ drive), max_rate)
        spikes[t] = rng.poisson(rate)
    return {"spikes": spikes, "weights": weights, "bias": bias, "kernel": kernel, "n_observed": np.int64(n_observed)}


def load_spikes(path: str) -> dict[str, np.ndarray]:
    """Arrays of a spikes.npz; names the file when one is missing."""
    with np.load(path) as data:
        missing = {"spikes", "weights", "bias", "kernel", "n_observed"} - set(data.files)
        if missing:
            raise InputError(path, f"missing arrays {sorted(missing)}")
        return {k: data[k] for k in data.files}
