"""Temporal coupling curves between the structure and sequence generative processes.

A coupling is a path gamma(s) = (t_struct(s), t_seq(s)), s in [0, 1], from (0, 0) (all noise) to (1, 1)
(data). The parametric family (a reconstruction; the paper's family is not public) is
t_struct = s, t_seq = s ** alpha: alpha > 1 means the structure is ahead of the sequence along the
whole path ("structure-leading"), alpha = 1 is the synchronous diagonal. The random coupling (MultiFlow)
draws the two times independently and uniformly in training and follows the diagonal at sampling.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Coupling:
    """One coupling: a curve exponent, whether training times are independent (random), a jitter."""

    name: str
    alpha: float = 1.0
    random: bool = False
    jitter: float = 0.0

    @property
    def sampling_alpha(self) -> float:
        """The exponent of the path followed at sampling (the diagonal for the random coupling)."""
        return 1.0 if self.random else self.alpha

    def curve(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(t_struct, t_seq) on the sampling path at parameters ``s``."""
        s = np.clip(np.asarray(s, dtype=float), 0.0, 1.0)
        return s, s**self.sampling_alpha


def named(name: str, jitter: float, alpha: float | None = None) -> Coupling:
    """The coupling called ``name``: synchronous, random, alpha_<a> (a fixed curve) or learned (with ``alpha``)."""
    if name == "synchronous":
        return Coupling(name, 1.0, False, jitter)
    if name == "random":
        return Coupling(name, 1.0, True, 0.0)
    if name.startswith("alpha_"):
        return Coupling(name, float(name.removeprefix("alpha_")), False, jitter)
    if name == "learned":
        if alpha is None:
            raise ValueError("the learned coupling needs the selected alpha")
        return Coupling(name, float(alpha), False, jitter)
    raise ValueError(f"unknown coupling {name!r}: expected synchronous, random, alpha_<a> or learned")


def curve_defects(alpha: float, grid: int = 1001) -> dict[str, float]:
    """How far the curve of ``alpha`` is from a valid coupling: endpoint errors and the largest decrease."""
    s = np.linspace(0.0, 1.0, grid)
    t_struct, t_seq = Coupling("c", alpha).curve(s)
    return {
        "start": float(np.max(np.abs([t_struct[0], t_seq[0]]))),
        "end": float(np.max(np.abs([t_struct[-1] - 1.0, t_seq[-1] - 1.0]))),
        "largest_decrease": float(np.max(np.concatenate([[0.0], -np.diff(t_struct), -np.diff(t_seq)]))),
    }
