"""The reconstruction controllers: feed-forward (one pass) and AutoMat's closed loop (verify, roll back, retry).

Both start alike: denoise (noise-gated experts), fit the hexagonal lattice, read the sublattice intensity
ratio and pick the template nearest in (log ratio, log a). The feed-forward pipeline outputs that
hypothesis. The closed loop verifies it: re-render with the forward model at the best translation and
require NCC >= ``ncc_accept``, and require the MLIP strain energy (CHGNet energy per atom at the fitted a
above the template's minimum on the grid) <= ``energy_window``; on failure it rolls back to the template-
retrieval branch, which ranks every (template, lattice hypothesis) pair by re-rendering NCC, and retries
them in that order until one passes the MLIP check (at most ``max_retries``). A deterministic rule replaces
the paper's LLM agent.
"""

from __future__ import annotations

import numpy as np

from repro.papers.automat import analysis
from repro.papers.automat.templates import LIBRARY


class EnergyModel:
    """CHGNet energies per atom on each template's lattice-constant grid, interpolated linearly."""

    def __init__(self, table: dict):
        self.table = {k: {f: np.asarray(v[f], float) for f in v} for k, v in table.items()}

    def strain_energy(self, name: str, a: float) -> float:
        """Energy per atom above the grid minimum; infinite outside the grid (an implausible lattice)."""
        t = self.table[name]
        if not t["a"][0] <= a <= t["a"][-1]:
            return float("inf")
        return float(np.interp(a, t["a"], t["energy_per_atom"]) - np.min(t["energy_per_atom"]))

    def formation(self, name: str, a: float) -> float:
        t = self.table[name]
        return float(np.interp(a, t["a"], t["formation_per_atom"]))


def nearest_template(names: list[str], ratio: float, a: float, cfg: dict) -> str:
    score = [
        abs(np.log(ratio) - np.log(LIBRARY[n].intensity_ratio())) / cfg["ratio_scale"]
        + abs(np.log(a) - np.log(LIBRARY[n].a)) / cfg["a_scale"]
        for n in names
    ]
    return names[int(np.argmin(score))]


def first_hypothesis(counts: np.ndarray, names: list[str], imaging: dict, cfg: dict):
    a_range = tuple(cfg["a_range"])
    den, expert = analysis.denoise(counts, imaging, a_range)
    lattices = analysis.lattice_hypotheses(den, imaging["pixel"], a_range)
    a, theta, _ = lattices[0]
    ratio = analysis.sublattice_ratio(den, a, theta, imaging)
    return den, expert, lattices, {"template": nearest_template(names, ratio, a, cfg), "a": a, "theta": theta,
                                   "ratio": ratio}  # fmt: skip


def feed_forward(counts: np.ndarray, names: list[str], imaging: dict, cfg: dict) -> dict:
    _, expert, _, h = first_hypothesis(counts, names, imaging, cfg)
    return h | {"expert": expert, "retries": 0, "verified": False}


def closed_loop(counts: np.ndarray, names: list[str], imaging: dict, cfg: dict, energies: EnergyModel) -> dict:
    den, expert, lattices, h = first_hypothesis(counts, names, imaging, cfg)

    def check(template: str, a: float, theta: float) -> tuple[float, float]:
        return analysis.best_shift(den, template, a, theta, imaging)[1], energies.strain_energy(template, a)

    ncc, strain = check(h["template"], h["a"], h["theta"])
    if ncc >= cfg["ncc_accept"] and strain <= cfg["energy_window"]:
        return h | {"expert": expert, "retries": 0, "verified": True, "ncc": ncc, "strain_energy": strain}
    candidates = []
    for a, theta, _ in lattices:
        for name in names:
            candidates.append((name, a, theta, analysis.best_shift(den, name, a, theta, imaging)[1]))
    candidates.sort(key=lambda c: -c[3])
    for retry, (name, a, theta, score) in enumerate(candidates[: cfg["max_retries"]], start=1):
        strain = energies.strain_energy(name, a)
        if strain <= cfg["energy_window"]:
            return {"template": name, "a": a, "theta": theta, "ratio": h["ratio"], "expert": expert, "retries": retry,
                    "verified": True, "ncc": score, "strain_energy": strain}  # fmt: skip
    return h | {"expert": expert, "retries": cfg["max_retries"], "verified": False, "ncc": ncc, "strain_energy": strain}
