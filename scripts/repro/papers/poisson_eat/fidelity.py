"""Distributional fidelity of each relaxation (Part A) and the Negative Binomial extension.

For every method, rate and temperature: Monte-Carlo mean and variance (float64) with their z-scores
against the rate and against the Campbell closed forms, the standard error of the variance (for its bias
against the Poisson variance, which equals the rate), and the Wasserstein-1 distance to Poisson(rate).
"""

from __future__ import annotations

import logging

import numpy as np
import torch

from repro.papers.poisson_eat.closed_forms import eat_moments
from repro.papers.poisson_eat.metrics import (
    mean_zscore,
    negative_binomial_law,
    poisson_law,
    variance_se,
    variance_zscore,
    w1_to_discrete,
)
from repro.papers.poisson_eat.relaxations import negative_binomial_sample, relaxed_sample

LOG = logging.getLogger(__name__)
CHUNK = 20_000


def draw(method: str, rate: float, tau: float, n: int) -> np.ndarray:
    """``n`` relaxed draws at one rate, in chunks to bound memory."""
    out = []
    for start in range(0, n, CHUNK):
        size = min(CHUNK, n - start)
        out.append(relaxed_sample(torch.full((size,), rate, dtype=torch.float64), tau, method).numpy())
    return np.concatenate(out)


def fidelity_row(method: str, rate: float, tau: float, samples: np.ndarray) -> dict:
    """Moments, their z-scores and W1 of one (method, rate, tau) cell."""
    row = {
        "method": method,
        "rate": rate,
        "tau": tau,
        "n": samples.size,
        "mean": samples.mean(),
        "var": samples.var(ddof=1),
        "var_se": variance_se(samples),
        "z_mean_vs_rate": mean_zscore(samples, rate),
        "w1": w1_to_discrete(samples, *poisson_law(rate)),
    }
    if method.startswith("eat_"):
        mean, var = eat_moments(rate, tau, method[4:])
        row |= {
            "closed_mean": mean,
            "closed_var": var,
            "z_mean_vs_closed": mean_zscore(samples, mean),
            "z_var_vs_closed": variance_zscore(samples, var),
        }
    return row


def analyse(cfg: dict, seed: int) -> dict:
    """Grid table, W1-vs-tau curve and Negative Binomial table."""
    torch.manual_seed(seed)
    grid = []
    for method in cfg["methods"]:
        for rate in cfg["rates"]:
            for tau in cfg["taus"]:
                grid.append(fidelity_row(method, rate, tau, draw(method, rate, tau, cfg["draws"])))
        LOG.info("grid done for %s", method)
    curve = []
    for method in cfg["curve_methods"]:
        for tau in cfg["tau_curve"]:
            w1 = [
                w1_to_discrete(draw(method, rate, tau, cfg["curve_draws"]), *poisson_law(rate)) for rate in cfg["rates"]
            ]
            curve.append({"method": method, "tau": tau, "w1_mean": float(np.mean(w1)), "w1": w1})
    nb_cfg = cfg["negative_binomial"]
    law = negative_binomial_law(nb_cfg["shape"], nb_cfg["rate"])
    shape = torch.full((nb_cfg["draws"],), float(nb_cfg["shape"]), dtype=torch.float64)
    rate = torch.full_like(shape, float(nb_cfg["rate"]))
    nb_mean = nb_cfg["shape"] / nb_cfg["rate"]
    nb = []
    for method in cfg["methods"]:
        for tau in cfg["taus"]:
            samples = negative_binomial_sample(shape, rate, tau, method).numpy()
            nb.append(
                {
                    "method": method,
                    "tau": tau,
                    "mean": samples.mean(),
                    "target_mean": nb_mean,
                    "z_mean": mean_zscore(samples, nb_mean),
                    "w1": w1_to_discrete(samples, *law),
                }
            )
    return {"grid": grid, "curve": curve, "negative_binomial": nb}
