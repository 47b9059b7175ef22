"""Penalties from ecological theory and literature, computed on simulated trajectories.

Every penalty is a squared hinge that is exactly zero inside its admissible range, so a model that
respects the constraints pays nothing for them; ratio hinges act on log(ratio) to be scale-free.
"""

from __future__ import annotations

from pathlib import Path

import torch
import yaml

from repro.papers.hysomi.soil_model import PARAMS, STATES

EPS = 1e-12


def hinge(g: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    """relu(lo - g)^2 + relu(g - hi)^2 elementwise: 0 exactly when lo <= g <= hi."""
    return torch.relu(lo - g) ** 2 + torch.relu(g - hi) ** 2


def ratio_penalties(traj: torch.Tensor, ratios: dict, weight: torch.Tensor) -> torch.Tensor:
    """Sum over ratio constraints of the weighted mean log-ratio hinge; traj (M, N, T, 5), weight (M, N)."""
    total = traj.new_zeros(traj.shape[0])
    for spec in ratios.values():
        num = traj[..., STATES.index(spec["numerator"])].clamp(min=EPS)
        den = traj[..., STATES.index(spec["denominator"])].clamp(min=EPS)
        pen = hinge(
            torch.log(num / den), float(torch.log(torch.tensor(spec["lo"]))), float(torch.log(torch.tensor(spec["hi"])))
        )
        total = total + (pen.mean(-1) * weight).sum(-1) / weight.sum(-1)
    return total


def positivity_penalty(traj: torch.Tensor, scale: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Mean squared negative part of each state, in units of the state's scale."""
    pen = (torch.relu(-traj / scale) ** 2).sum(-1).mean(-1)
    return (pen * weight).sum(-1) / weight.sum(-1)


def tradeoff_penalty(theta: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Growth-rate/yield trade-off: squared positive part of the weighted correlation of V_u and CUE."""
    v_u, cue = theta[..., PARAMS.index("V_u")], theta[..., PARAMS.index("CUE")]
    w = weight / weight.sum(-1, keepdim=True)
    dv = v_u - (w * v_u).sum(-1, keepdim=True)
    dc = cue - (w * cue).sum(-1, keepdim=True)
    corr = (w * dv * dc).sum(-1) / torch.sqrt((w * dv**2).sum(-1) * (w * dc**2).sum(-1) + EPS)
    return torch.relu(corr) ** 2


def load_ratios(path: str | Path) -> dict:
    return yaml.safe_load(Path(path).read_text())["ratios"]


def total_penalty(traj, theta, scale, weight, ratios) -> torch.Tensor:
    """All constraint penalties per member, shape (M,)."""
    return (
        ratio_penalties(traj, ratios, weight)
        + positivity_penalty(traj, scale, weight)
        + tradeoff_penalty(theta, weight)
    )
