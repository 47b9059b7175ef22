"""Relaxed Poisson samplers: EAT with four indicator shapes, Gumbel-SoftMax, Negative Binomial mixture.

EAT draws arrival times of a rate-lambda Poisson process, T_k = sum_{j<=k} E_j / lambda with E_j ~ Exp(1),
and returns the soft count z = sum_k f(T_k), where f is a smoothed indicator of [0, 1] of width tau.
Campbell's theorem gives E[z] = lambda * int f and Var[z] = lambda * int f^2, so an indicator whose
integral is exactly 1 (the compact, symmetric ones: cubic, linear, cosine; needs tau <= 1) makes the first
moment exactly lambda -- the "modified EAT" property. The sigmoid has infinite support and integral
tau * softplus(1 / tau) > 1, hence its upward bias.
"""

from __future__ import annotations

import functools
import math

import torch
from scipy import stats

from repro.papers.poisson_eat.closed_forms import check_tau

METHODS = ("eat_sigmoid", "eat_cubic", "gsm")
SIGMOID_HORIZON = 10.0
"""Sigmoid EAT simulates arrivals up to t = 1 + 10 tau: the neglected tail mass is lambda tau e^-10."""


def indicator(t: torch.Tensor, tau: float, kind: str) -> torch.Tensor:
    """Smoothed indicator f(t) of arrival before time 1."""
    check_tau(kind, tau)
    if kind == "sigmoid":
        return torch.sigmoid((1.0 - t) / tau)
    u = ((t - 1.0 + tau) / (2.0 * tau)).clamp(0.0, 1.0)
    if kind == "cubic":
        return 1.0 - (3.0 * u**2 - 2.0 * u**3)
    if kind == "linear":
        return 1.0 - u
    return 0.5 * (1.0 + torch.cos(math.pi * u))


def horizon(tau: float, kind: str) -> float:
    """Last time at which an arrival still changes z (up to the sigmoid's neglected tail)."""
    return 1.0 + (SIGMOID_HORIZON if kind == "sigmoid" else 1.0) * tau


def n_arrivals(max_rate: float, tau: float, kind: str) -> int:
    """Arrivals to simulate: mean + 8 sd + 12 of the count before the horizon.

    A Poisson(m) count exceeds m + 8 sqrt(m) + 12 with probability below 1e-12 for every m (Chernoff
    bound), so truncation is negligible; the bound avoids a scipy quantile call per training step.
    """
    mean = max(float(max_rate), 0.0) * horizon(tau, kind)
    return int(math.ceil(mean + 8.0 * math.sqrt(mean) + 12.0))


def _eat_block(rate: torch.Tensor, tau: float, kind: str, generator: torch.Generator | None) -> torch.Tensor:
    n = n_arrivals(float(rate.detach().max()), tau, kind)
    e = torch.empty((n, *rate.shape), dtype=rate.dtype, device=rate.device).exponential_(generator=generator)
    arrivals = torch.cumsum(e / rate.unsqueeze(0), dim=0)
    return indicator(arrivals, tau, kind).sum(dim=0)


def eat_sample(
    rate: torch.Tensor, tau: float, kind: str, generator: torch.Generator | None = None, buckets: int = 8
) -> torch.Tensor:
    """One relaxed Poisson draw per entry of ``rate`` (reparameterised: differentiable in ``rate``).

    Heterogeneous rates are sorted into ``buckets`` groups, each simulated with the arrivals its own
    largest rate needs, so one large rate does not make every entry simulate hundreds of arrivals.
    """
    check_tau(kind, tau)
    flat = rate.reshape(-1)
    if flat.numel() < 1024 or buckets <= 1:
        return _eat_block(rate, tau, kind, generator)
    order = torch.argsort(flat.detach())
    pieces = [_eat_block(flat[idx], tau, kind, generator) for idx in order.chunk(buckets)]
    return torch.cat(pieces)[torch.argsort(order)].reshape(rate.shape)


def gsm_support(max_rate: float, eps: float = 1e-8) -> int:
    """Largest count K of the GSM support: the (1 - eps) Poisson quantile of the largest rate.

    The rate is rounded up to 1/100 so the quantile is computed once per distinct value.
    """
    return _poisson_quantile(math.ceil(max(float(max_rate), 1e-6) * 100.0) / 100.0, eps) + 1


@functools.lru_cache(maxsize=4096)
def _poisson_quantile(rate: float, eps: float) -> int:
    return int(stats.poisson.ppf(1.0 - eps, rate))


def gsm_sample(rate: torch.Tensor, tau: float, generator: torch.Generator | None = None) -> torch.Tensor:
    """Gumbel-SoftMax over counts {0..K}: z = sum_k k softmax((log p_k + g_k) / tau)."""
    if tau <= 0:
        raise ValueError(f"temperature must be positive, got {tau}")
    k = torch.arange(gsm_support(float(rate.detach().max())) + 1, dtype=rate.dtype, device=rate.device)
    r = rate.unsqueeze(-1)
    logits = k * torch.log(r) - r - torch.lgamma(k + 1.0)
    u = torch.rand(logits.shape, dtype=rate.dtype, device=rate.device, generator=generator)
    gumbel = -torch.log(-torch.log(u.clamp_min(1e-300)))
    return (torch.softmax((logits + gumbel) / tau, dim=-1) * k).sum(-1)


def relaxed_sample(rate: torch.Tensor, tau: float, method: str, generator: torch.Generator | None = None):
    """Dispatch on a method name: 'eat_<indicator>' or 'gsm'."""
    if method == "gsm":
        return gsm_sample(rate, tau, generator)
    if method.startswith("eat_"):
        return eat_sample(rate, tau, method[4:], generator)
    raise ValueError(f"unknown relaxation {method!r}")


def negative_binomial_sample(shape: torch.Tensor, rate: torch.Tensor, tau: float, method: str) -> torch.Tensor:
    """Relaxed NB(shape, p = 1 / (1 + rate)) as a Gamma-Poisson mixture (Gamma draw reparameterised; global RNG)."""
    lam = torch.distributions.Gamma(shape, rate).rsample()
    return relaxed_sample(lam.clamp_min(1e-12), tau, method)
