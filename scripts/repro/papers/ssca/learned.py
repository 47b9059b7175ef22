"""The trained parts of SSCA (reconstructed): a learned Gaussianization and projectors trained with the
sliced-Wasserstein loss to a Gaussian hub.

- **Learned Gaussianization**: per coordinate g(x) = Phi^-1(F(x)), F a mixture of logistic CDFs of the robustly
  standardised coordinate s = (x - median) / (IQR / 1.349) (a learned, smooth rank function: soft rank / n), so g
  is strictly increasing. It is fitted by minimising the 1-D Wasserstein-2 distance of g(x) to N(0, 1) on the
  training rows: sort-and-match of the coordinate's order statistics against normal quantiles, i.e. the
  sliced-Wasserstein distance along each coordinate axis. The components start at quantiles of s.
- **Projectors trained to the hub**: linear maps W_m (d_m -> k), one per view, minimising
  mean_i sum_{m<n} ||z_m,i - z_n,i||^2 / k (the paired alignment) + lambda * sum_m SW_2^2(z_m, N(0, I_k)) over
  L random directions: the hub is the standard Gaussian, and because a unit direction of N(0, I) is N(0, 1), each
  direction's term is the sorted projections matched to normal quantiles (no hub samples are drawn). The hub
  term keeps every view's representation spread as the hub is (without it the paired term collapses z to 0).
  The projectors start from the block-spectral solution (the spectral component) or, for the ablation, from a
  random orthonormal map; each Adam step uses a random batch of paired rows and fresh directions.

Everything runs in float64 on the CPU from a seeded generator, full batch, so a run is a function of its seed.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.special import ndtri

QUANTILE_POINTS = 256
"""Order statistics per coordinate the Gaussianization's W2 loss matches (evenly spaced ranks)."""


def normal_quantiles(n: int) -> torch.Tensor:
    return torch.as_tensor(ndtri((np.arange(n) + 0.5) / n), dtype=torch.float64)


def robust_scale(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Median and IQR / 1.349 per column (1 where the IQR is 0: a column of ties)."""
    q25, q50, q75 = np.percentile(x, [25, 50, 75], axis=0)
    scale = (q75 - q25) / 1.349
    return q50, np.where(scale > 0, scale, np.maximum(x.std(0), 1e-12))


class Gaussianizer(torch.nn.Module):
    """The learned Gaussianization of one view: per coordinate g(x) = Phi^-1(F(x)) with F a learned CDF, a mixture
    of ``units`` logistic CDFs of the robustly standardised coordinate. F is a smooth, learned stand-in for the
    soft rank's empirical CDF (soft rank / n), so g is the soft-rank Gaussianization with its rank function
    learned; it is strictly increasing, and heavy tails are no problem since F stays in (0, 1)."""

    def __init__(self, train: np.ndarray, units: int, clip: float = 1e-3):
        super().__init__()
        centre, scale = robust_scale(train)
        self.clip = clip
        self.register_buffer("centre", torch.as_tensor(centre, dtype=torch.float64))
        self.register_buffer("scale", torch.as_tensor(scale, dtype=torch.float64))
        s = (train - centre) / scale
        locs = np.percentile(s, (np.arange(units) + 0.5) / units * 100, axis=0).T  # (d, units)
        spacing = np.maximum(np.diff(np.percentile(s, [5, 95], axis=0), axis=0)[0] / units, 0.05)
        d = train.shape[1]
        self.loc = torch.nn.Parameter(torch.as_tensor(locs, dtype=torch.float64))
        self.log_width = torch.nn.Parameter(torch.as_tensor(np.log(np.tile(spacing[:, None], (1, units)))))
        self.logit_weight = torch.nn.Parameter(torch.zeros(d, units, dtype=torch.float64))

    def cdf(self, x: torch.Tensor) -> torch.Tensor:
        s = (x - self.centre) / self.scale
        weight = torch.softmax(self.logit_weight, dim=-1)
        return (weight * torch.sigmoid((s.unsqueeze(-1) - self.loc) / self.log_width.exp())).sum(-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """g(x) for rows x (n, d)."""
        u = self.cdf(x).clamp(self.clip, 1.0 - self.clip)
        return torch.special.ndtri(u)


def marginal_w2(g: torch.Tensor) -> torch.Tensor:
    """Per column the squared 1-D Wasserstein-2 distance of the sample to N(0, 1) (sort and match), (d,)."""
    n = g.shape[0]
    return torch.mean((torch.sort(g, dim=0).values - normal_quantiles(n)[:, None]) ** 2, dim=0)


def order_statistics(x: np.ndarray, points: int = QUANTILE_POINTS) -> np.ndarray:
    """``points`` evenly spaced order statistics of every column (all rows when there are fewer)."""
    if x.shape[0] <= points:
        return np.sort(x, axis=0)
    idx = np.round((np.arange(points) + 0.5) / points * x.shape[0] - 0.5).astype(int)
    return np.sort(x, axis=0)[idx]


def fit_gaussianizer(
    train: np.ndarray, units: int, steps: int, lr: float, clip: float = 1e-3
) -> tuple[Gaussianizer, list[float]]:
    """Fit one view's Gaussianizer by Adam on the summed marginal W2 loss; returns it and the loss history."""
    model = Gaussianizer(train, units, clip)
    rows = torch.as_tensor(order_statistics(train), dtype=torch.float64)
    target = normal_quantiles(rows.shape[0])[:, None]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    history = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.mean((model(rows) - target) ** 2)  # the rows are sorted and g is increasing
        loss.backward()
        opt.step()
        history.append(float(loss.detach()))
    return model, history


@torch.no_grad()
def apply(model: Gaussianizer, x: np.ndarray) -> np.ndarray:
    return model(torch.as_tensor(x, dtype=torch.float64)).numpy()


def sw_to_gaussian(z: torch.Tensor, directions: torch.Tensor) -> torch.Tensor:
    """SW_2^2(z, N(0, I)) along unit ``directions`` (L, k): sorted projections against normal quantiles."""
    proj = torch.sort(z @ directions.T, dim=0).values
    return torch.mean((proj - normal_quantiles(z.shape[0])[:, None]) ** 2)


def unit_directions(rng: np.random.Generator, k: int, n_dirs: int) -> torch.Tensor:
    theta = rng.normal(size=(n_dirs, k))
    return torch.as_tensor(theta / np.linalg.norm(theta, axis=1, keepdims=True), dtype=torch.float64)


def random_start(rng: np.random.Generator, dims: list[int], k: int) -> list[np.ndarray]:
    """A random orthonormal map per view, scaled as a whitened projection (the minus-spectral ablation's start)."""
    return [np.linalg.qr(rng.normal(size=(d, k)))[0] for d in dims]


def hub_loss(zs: list[torch.Tensor], directions: torch.Tensor, weight: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(paired alignment over every pair of views, SW hub term summed over views)."""
    k = zs[0].shape[1]
    pairs = [(a, b) for a in range(len(zs)) for b in range(a + 1, len(zs))]
    align = sum(torch.mean(torch.sum((zs[a] - zs[b]) ** 2, dim=1)) / k for a, b in pairs) / len(pairs)
    hub = sum(sw_to_gaussian(z, directions) for z in zs)
    return align, weight * hub


def train_projectors(
    views: list[np.ndarray], start: list[np.ndarray], cfg: dict, rng: np.random.Generator
) -> tuple[list[np.ndarray], list[dict]]:
    """Adam on the paired alignment plus the SW hub loss from ``start``; each step draws ``batch`` paired rows and
    fresh random directions (from ``rng``). Returns the maps and the loss history."""
    xs = [torch.as_tensor(v, dtype=torch.float64) for v in views]
    n = xs[0].shape[0]
    ws = [torch.nn.Parameter(torch.as_tensor(w, dtype=torch.float64).clone()) for w in start]
    opt = torch.optim.Adam(ws, lr=cfg["lr"])
    k = start[0].shape[1]
    history = []
    for _ in range(cfg["steps"]):
        rows = torch.as_tensor(rng.choice(n, min(cfg["batch"], n), replace=False))
        directions = unit_directions(rng, k, cfg["directions"])
        opt.zero_grad()
        align, hub = hub_loss([x[rows] @ w for x, w in zip(xs, ws)], directions, cfg["hub_weight"])
        (align + hub).backward()
        opt.step()
        history.append({"align": float(align.detach()), "hub": float(hub.detach())})
    return [w.detach().numpy() for w in ws], history
