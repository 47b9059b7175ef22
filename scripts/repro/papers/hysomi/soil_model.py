"""The microbially explicit soil organic matter model (SOC, DOC, MBC, ENZ, CO2) in torch.

Why a fixed-step RK4 in float64: Runge-Kutta methods preserve linear invariants exactly,
so total carbon is conserved to round-off in a closed incubation (a testable identity), and
a fixed step keeps the solve differentiable and cheap for the small batched systems trained here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import torch
import yaml

STATES = ("SOC", "DOC", "MBC", "ENZ", "CO2")
PARAMS = ("V_d", "K_d", "V_u", "K_u", "CUE", "r_d", "r_ep", "r_el")
SIM_DT = 0.25  # step of the synthetic generator, in days


@dataclass(frozen=True)
class Bounds:
    """Per-parameter bounds; ``log`` parameters are mapped on the log scale."""

    lo: torch.Tensor
    hi: torch.Tensor
    log: torch.Tensor
    f_s: float

    @classmethod
    def from_yaml(cls, path: str | Path) -> Bounds:
        doc = yaml.safe_load(Path(path).read_text())
        p = doc["parameters"]
        missing = [k for k in PARAMS if k not in p]
        if missing:
            raise ValueError(f"{path}: parameters {missing} missing")
        return cls(
            lo=torch.tensor([float(p[k]["lo"]) for k in PARAMS], dtype=torch.float64),
            hi=torch.tensor([float(p[k]["hi"]) for k in PARAMS], dtype=torch.float64),
            log=torch.tensor([bool(p[k]["log"]) for k in PARAMS]),
            f_s=float(doc["fixed"]["f_s"]["value"]),
        )

    def from_unit(self, u: torch.Tensor) -> torch.Tensor:
        """Map u in [0, 1] (last dim = parameters) to [lo, hi], log-uniformly for log parameters.

        The final clamp only removes round-off of exp(log(.)) at a saturated sigmoid.
        """
        lin = self.lo + (self.hi - self.lo) * u
        logv = torch.exp(torch.log(self.lo) + (torch.log(self.hi) - torch.log(self.lo)) * u)
        return torch.minimum(torch.maximum(torch.where(self.log, logv, lin), self.lo), self.hi)

    def to_unit(self, theta: torch.Tensor) -> torch.Tensor:
        """Inverse of :meth:`from_unit`."""
        lin = (theta - self.lo) / (self.hi - self.lo)
        logu = (torch.log(theta) - torch.log(self.lo)) / (torch.log(self.hi) - torch.log(self.lo))
        return torch.where(self.log, logu, lin)


def stoichiometry(f_s: float, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """(6, 5) matrix from the process rates to the pools' derivatives.

    Rates, in order: depolymerisation, growth uptake (CUE x uptake), respired uptake ((1 - CUE) x uptake),
    death, enzyme production, enzyme loss. Every row sums to zero: what one pool loses another gains
    (CO2 included), so total carbon is conserved. One matrix product replaces five sums of terms, which
    halves the operations autograd records per step: training is bound by that count, not by arithmetic.
    """
    return torch.tensor(
        [
            # SOC   DOC         MBC   ENZ   CO2
            [-1.0, 1.0, 0.0, 0.0, 0.0],
            [0.0, -1.0, 1.0, 0.0, 0.0],
            [0.0, -1.0, 0.0, 0.0, 1.0],
            [f_s, 1.0 - f_s, -1.0, 0.0, 0.0],
            [0.0, 0.0, -1.0, 1.0, 0.0],
            [0.0, 1.0, 0.0, -1.0, 0.0],
        ],
        dtype=dtype,
    )


def fluxes(x: torch.Tensor, theta: torch.Tensor | tuple[torch.Tensor, ...], f_s: float | torch.Tensor) -> torch.Tensor:
    """Right-hand side dx/dt for states ``x[..., 5]`` and parameters ``theta[..., 8]`` (closed system).

    ``theta`` may also be the tuple of its 8 columns, and ``f_s`` the :func:`stoichiometry` matrix, which the
    solver builds once per solve.
    """
    soc, doc, mbc, enz, _ = x.unbind(-1)
    v_d, k_d, v_u, k_u, cue, r_d, r_ep, r_el = theta.unbind(-1) if isinstance(theta, torch.Tensor) else theta
    matrix = f_s if isinstance(f_s, torch.Tensor) else stoichiometry(f_s, x.dtype)
    uptake = v_u * mbc * doc / (k_u + doc)
    growth = cue * uptake
    rates = torch.stack(
        [v_d * enz * soc / (k_d + soc), growth, uptake - growth, r_d * mbc, r_ep * mbc, r_el * enz], dim=-1
    )
    return rates @ matrix


def observation_steps(times: list[float] | torch.Tensor, dt: float) -> list[int]:
    """Step indices of the observation times; each time must be a multiple of ``dt``."""
    steps = []
    for t in [float(t) for t in times]:
        k = round(t / dt)
        if not math.isclose(k * dt, t, abs_tol=1e-9):
            raise ValueError(f"observation time {t} d is not a multiple of the step {dt} d")
        steps.append(k)
    return steps


MAX_SUBSTEPS = 256


@torch.no_grad()
def fastest_rate(x: torch.Tensor, theta: torch.Tensor) -> float:
    """Upper bound on the fastest relative outflow rate (d-1) of any pool, over the batch.

    The DOC pool is the stiff one: its outflow rate V_u * MBC / (K_u + DOC) grows with biomass.
    """
    soc, doc, mbc, enz = x[..., 0], x[..., 1], x[..., 2], x[..., 3]
    v_d, k_d, v_u, k_u, _, r_d, r_ep, r_el = theta.unbind(-1)
    rates = torch.stack(
        [
            v_d * enz / (k_d + soc.clamp(min=0)),
            v_u * mbc.abs() / k_u,
            r_d + r_ep + v_u * doc.abs() / (k_u + doc.abs()),
            r_el,
        ],
        dim=-1,
    )
    return float(rates.max())


def rk4_step(x: torch.Tensor, theta, h: float, f_s: float | torch.Tensor) -> torch.Tensor:
    k1 = fluxes(x, theta, f_s)
    k2 = fluxes(torch.add(x, k1, alpha=0.5 * h), theta, f_s)
    k3 = fluxes(torch.add(x, k2, alpha=0.5 * h), theta, f_s)
    k4 = fluxes(torch.add(x, k3, alpha=h), theta, f_s)
    slope = torch.add(torch.add(k1, k2, alpha=2.0), torch.add(k4, k3, alpha=2.0))
    return torch.add(x, slope, alpha=h / 6.0)


def simulate(x0: torch.Tensor, theta: torch.Tensor, times: list[float], dt: float, f_s: float) -> torch.Tensor:
    """Integrate with classical RK4 and return states at ``times``: shape ``x0.shape[:-1] + (T, 5)``.

    Each step of ``dt`` is split into equal substeps when the fastest pool turns over faster than
    once per substep (h * rate <= 1), so fast-growing parameter sets stay stable and positive. The
    substep count is a discrete choice (no gradient flows through it), and any RK4 step size keeps
    total carbon exactly conserved.
    """
    steps = observation_steps(times, dt)
    keep = set(steps)
    out: dict[int, torch.Tensor] = {}
    x = x0
    columns = theta.unbind(-1)
    matrix = stoichiometry(f_s, x0.dtype)
    for k in range(max(steps) + 1):
        if k in keep:
            out[k] = x
        if k == max(steps):
            break
        n_sub = max(1, math.ceil(dt * fastest_rate(x, theta)))
        if n_sub > MAX_SUBSTEPS:
            raise FloatingPointError(f"soil model too stiff at t = {k * dt} d ({n_sub} substeps needed)")
        for _ in range(n_sub):
            x = rk4_step(x, columns, dt / n_sub, matrix)
    return torch.stack([out[k] for k in steps], dim=-2)
