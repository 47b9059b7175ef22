"""Gradient quality (Part B) of each estimator against the exact Poisson gradient.

For g(z) in {z^2, exp(-z)} and a grid of rates, each estimator gives one single-sample gradient
vector d g(z) / d lambda per draw (reparameterised for the relaxations, g(N)(N / lambda - 1) for the
score function); the reference is E[g(N + 1) - g(N)]. Each row also keeps the mean gradient of ``batches``
disjoint groups of draws, from which a block bootstrap gives Monte-Carlo intervals of the cosine.
"""

from __future__ import annotations

import numpy as np
import torch

from repro.papers.poisson_eat.metrics import exact_poisson_gradient, gradient_quality
from repro.papers.poisson_eat.relaxations import relaxed_sample

TEST_FUNCTIONS = {
    "square": (lambda z: z**2, lambda k: k**2),
    "exp_neg": (lambda z: torch.exp(-z), lambda k: np.exp(-k)),
}
CHUNK = 10_000


def per_sample_gradients(method: str, g, rates: list[float], tau: float, n: int) -> np.ndarray:
    """(n, len(rates)) single-draw gradient estimates."""
    out = []
    for start in range(0, n, CHUNK):
        size = min(CHUNK, n - start)
        rate = torch.tensor(rates, dtype=torch.float64).repeat(size, 1).requires_grad_(True)
        if method == "score":
            counts = torch.poisson(rate.detach())
            out.append((g(counts) * (counts / rate.detach() - 1.0)).numpy())
            continue
        g(relaxed_sample(rate, tau, method)).sum().backward()
        out.append(rate.grad.numpy())
    return np.concatenate(out)


def analyse(cfg: dict, seed: int) -> dict:
    """One row per (test function, method, tau) with the three gradient-quality metrics."""
    torch.manual_seed(seed)
    rows = []
    for name, (g_torch, g_np) in TEST_FUNCTIONS.items():
        reference = np.array([exact_poisson_gradient(g_np, r) for r in cfg["rates"]])
        for method in cfg["methods"]:
            taus = [None] if method == "score" else cfg["taus"]
            for tau in taus:
                grads = per_sample_gradients(method, g_torch, cfg["rates"], tau, cfg["draws"])
                rows.append(
                    {
                        "function": name,
                        "method": method,
                        "tau": tau,
                        "reference": reference,
                        "mean_gradient": grads.mean(axis=0),
                        "batch_means": [b.mean(axis=0) for b in np.array_split(grads, cfg["batches"])],
                        **gradient_quality(grads, reference),
                    }
                )
    return {"rates": cfg["rates"], "rows": rows}
