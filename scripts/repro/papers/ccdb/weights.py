"""CCDB's stage 2: per-sample weights that balance every class-conditional distribution of the bias features.

Each weighted class-conditional distribution of the bias embeddings b_i and the weighted marginal are
approximated by Gaussians; the objective is

    sum_y W2^2(N(mu_y^w, S_y^w), N(mu^w, S^w)) + alpha * sum_y (W_y - 1/C)^2 + beta * (log N - H(w / sum w)),

with W_y the share of the total weight on class y and H the entropy of the normalised weights. Driving every
class-conditional bias distribution to the marginal makes B independent of Y under the weights (I(Y; B) = 0,
so H(Y | B) is maximal); the class-share term balances the classes and the entropy term keeps the weights
from collapsing onto a few samples. w = softplus(theta) normalised to mean 1, optimised with Adam. No bias
label is used: b_i are features of a bias-capturing model.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F


def weighted_gaussian(b: torch.Tensor, w: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Weighted mean and covariance (+ eps I) of rows b (N, d) with weights w (N,)."""
    p = w / w.sum()
    mu = p @ b
    centred = b - mu
    cov = (centred * p[:, None]).T @ centred
    return mu, cov + eps * torch.eye(b.shape[1], dtype=b.dtype)


def gaussian_w2(mu1: torch.Tensor, cov1: torch.Tensor, mu2: torch.Tensor, cov2: torch.Tensor) -> torch.Tensor:
    """Squared 2-Wasserstein distance between two Gaussians (closed form):
    ||mu1 - mu2||^2 + tr(S1 + S2 - 2 (S2^1/2 S1 S2^1/2)^1/2).

    The trace of the matrix root is the sum of square roots of the eigenvalues of S2^1/2 S1 S2^1/2, which are
    those of L^T S1 L for the Cholesky factor S2 = L L^T (similar matrices): no eigenvector enters the
    gradient, so it stays finite when eigenvalues nearly coincide.
    """
    chol = torch.linalg.cholesky(cov2)
    values = torch.linalg.eigvalsh(chol.T @ cov1 @ chol)
    middle = values.clamp_min(1e-12).sqrt().sum()
    return ((mu1 - mu2) ** 2).sum() + torch.trace(cov1) + torch.trace(cov2) - 2 * middle


def objective(theta: torch.Tensor, b: torch.Tensor, y: torch.Tensor, n_classes: int, s: dict) -> torch.Tensor:
    w = F.softplus(theta)
    w = w / w.mean()
    mu, cov = weighted_gaussian(b, w, s["eps"])
    mismatch = torch.zeros((), dtype=b.dtype)
    shares = []
    for c in range(n_classes):
        mask = y == c
        mu_c, cov_c = weighted_gaussian(b[mask], w[mask], s["eps"])
        mismatch = mismatch + gaussian_w2(mu_c, cov_c, mu, cov)
        shares.append(w[mask].sum() / w.sum())
    balance = ((torch.stack(shares) - 1.0 / n_classes) ** 2).sum()
    p = w / w.sum()
    entropy_gap = torch.log(torch.tensor(float(len(w)), dtype=b.dtype)) + (p * torch.log(p)).sum()
    return mismatch + s["alpha"] * balance + s["beta"] * entropy_gap


def balance_weights(b, y, n_classes: int, s: dict, seed: int) -> tuple[torch.Tensor, list[float]]:
    """Optimise the weights (mean 1) for bias features b (N, d) and labels y; returns them and the objective path."""
    torch.manual_seed(seed)
    b = torch.as_tensor(b, dtype=torch.float64)
    y = torch.as_tensor(y)
    # softplus(theta0) = 1: start from uniform weights.
    theta = torch.full(
        (len(b),), float(torch.log(torch.expm1(torch.tensor(1.0)))), dtype=torch.float64, requires_grad=True
    )
    opt = torch.optim.Adam([theta], lr=s["lr"])
    path = []
    for _ in range(s["steps"]):
        opt.zero_grad()
        loss = objective(theta, b, y, n_classes, s)
        loss.backward()
        opt.step()
        path.append(float(loss.detach()))
    with torch.no_grad():
        w = F.softplus(theta)
        return (w / w.mean()).float(), path
