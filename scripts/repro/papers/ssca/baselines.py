"""Baseline: CLIP-style symmetric InfoNCE on linear projectors (minibatch Adam, numpy gradients).

Linear CCA is the two-view case of the block-spectral fit (repro.papers.ssca.spectral) on raw or
hard-rank Gaussianized views; tests check it against scikit-learn's CCA.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_softmax


def infonce_loss_grad(a: np.ndarray, b: np.ndarray, wa: np.ndarray, wb: np.ndarray, tau: float):
    """Symmetric InfoNCE of z_a = a wa, z_b = b wb (row-normalised, temperature tau) and its gradients."""
    za, zb = a @ wa, b @ wb
    na, nb = np.linalg.norm(za, axis=1, keepdims=True), np.linalg.norm(zb, axis=1, keepdims=True)
    ua, ub = za / na, zb / nb
    logits = ua @ ub.T / tau
    n = a.shape[0]
    lr, lc = log_softmax(logits, axis=1), log_softmax(logits, axis=0)
    loss = -(np.trace(lr) + np.trace(lc)) / (2 * n)
    g = (np.exp(lr) + np.exp(lc) - 2 * np.eye(n)) / (2 * n * tau)
    gua, gub = g @ ub, g.T @ ua
    gza = (gua - ua * np.sum(gua * ua, axis=1, keepdims=True)) / na
    gzb = (gub - ub * np.sum(gub * ub, axis=1, keepdims=True)) / nb
    return float(loss), a.T @ gza, b.T @ gzb


def fit_infonce(
    a: np.ndarray, b: np.ndarray, k: int, seed: int, steps: int, lr: float, tau: float, batch: int
) -> tuple[np.ndarray, np.ndarray]:
    """Adam on the symmetric InfoNCE loss of two linear projectors over random minibatches of pairs."""
    rng = np.random.default_rng(seed)
    params = [
        rng.normal(size=(a.shape[1], k)) / np.sqrt(a.shape[1]),
        rng.normal(size=(b.shape[1], k)) / np.sqrt(b.shape[1]),
    ]
    moments = [[np.zeros_like(p), np.zeros_like(p)] for p in params]
    for t in range(1, steps + 1):
        idx = rng.choice(a.shape[0], min(batch, a.shape[0]), replace=False)
        _, *grads = infonce_loss_grad(a[idx], b[idx], *params, tau)
        for p, g, mv in zip(params, grads, moments):
            mv[0] = 0.9 * mv[0] + 0.1 * g
            mv[1] = 0.999 * mv[1] + 0.001 * g**2
            p -= lr * (mv[0] / (1 - 0.9**t)) / (np.sqrt(mv[1] / (1 - 0.999**t)) + 1e-8)
    return params[0], params[1]
