"""Reconstruction hypotheses and the two controllers: feed-forward (one pass) and AutoMat's closed loop.

Analysis of one image (:func:`analyse`): denoise, atom-column peaks, species clusters, lattice candidates (from
the peaks, then the Fourier fit), a basis per lattice, each site's cross-section from a lattice-constrained
fit, and column contents ranked by how well their predicted cross-sections (Z^1.7 per atom, the detector's
calibration) match the measured ones; two groupings of the sites, each site on its own first, then the sites
of one intensity cluster sharing a content. The hypotheses come out ranked: lattice candidate, grouping,
content fit.

Feed-forward: the first hypothesis. Closed loop: verify hypotheses in rank order, each by (1) re-rendering it
with the verification model (:mod:`repro.papers.automat.verifier`, not the generator's model) and requiring the
NCC with the denoised image >= ``ncc_accept``, and (2) the MLIP (CHGNet) formation energy per atom against its
elemental references <= ``energy_window``; on failure retry the next (at most ``max_retries``), and when every
one fails roll back to the strongest denoising expert, analyse again and retry; when nothing passes, keep the
hypothesis with the best NCC among those the MLIP accepts. A deterministic rule replaces the paper's LLM agent.
The MLIP energies are computed for every hypothesis the loop could ask about, in one batch, before the loop
replays (:func:`energy_requests`): the same decisions as asking one at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from repro.papers.automat import analysis, verifier
from repro.papers.automat.chemistry import Content, assignments, contents, structure_from_columns
from repro.papers.automat.forward import ncc

STRONGEST = 2  # the Bragg-filter expert


@dataclass
class Hypothesis:
    lattice_rank: int
    source: str  # "peaks" or "fourier"
    grouping: str  # "clusters" or "sites"
    cell: np.ndarray
    origin: np.ndarray
    basis: np.ndarray
    site_contents: tuple[Content, ...]
    fit_error: float
    expert: int
    ncc: float = float("nan")
    _structure: object = field(default=None, repr=False)

    def structure(self):
        if self._structure is None:
            self._structure = structure_from_columns(self.cell, self.basis, list(self.site_contents))
        return self._structure

    def numbers(self) -> list[tuple[int, ...]]:
        return [(c.z,) * c.count for c in self.site_contents]

    def key(self) -> tuple:
        """What the MLIP energy depends on, to 0.5% in the cell: contents, sites and cell shape."""
        params = np.round(
            np.log(np.concatenate([np.linalg.norm(self.cell, axis=1), [abs(np.linalg.det(self.cell))]])) / 0.005
        )
        return tuple((c.z, c.count) for c in self.site_contents), tuple(np.round(self.basis.ravel(), 2)), tuple(params)


def analyse(
    counts: np.ndarray, dose: float, imaging: dict, cfg: dict, expert: int | None = None
) -> tuple[np.ndarray, int, list[Hypothesis]]:
    """(denoised image, expert, ranked hypotheses) of one image recorded at ``dose``."""
    a_range = tuple(cfg["a_range"])
    den, expert = analysis.denoise(counts, imaging, a_range, expert, dose)
    pixel, extent = imaging["pixel"], imaging["shape"] * imaging["pixel"]
    blur = {0: imaging["sigma_light"], 1: imaging["sigma_strong"]}.get(expert, imaging["sigma_light"]) * pixel
    sigma = float(np.hypot(imaging["sigma"], blur))
    background = dose * pixel**2 * imaging["background"] if cfg["intensity"] == "absolute" else None
    positions, heights = analysis.find_columns(den, dose, pixel, sigma, cfg, background)
    hypotheses: list[Hypothesis] = []
    if len(positions) < 3:
        return den, expert, hypotheses
    labels = analysis.cluster_intensities(np.maximum(heights, 1e-9), int(cfg["max_species"]),
                                          float(cfg["min_silhouette"]))  # fmt: skip
    cells = [("peaks", c) for c in analysis.lattice_search(positions, labels, extent, cfg)]
    a, theta, _ = analysis.lattice_hypotheses(den, pixel, a_range)[0]
    cells.append(("fourier", analysis.hexagonal_vectors(a, theta)))
    vocabulary = contents(list(cfg["elements"]), int(cfg["max_column_atoms"]))
    for rank, (source, cell) in enumerate(cells):
        try:
            fit = analysis.fit_basis(positions, labels, heights, cell, cfg)
        except np.linalg.LinAlgError:
            continue
        lengths = np.linalg.norm(fit["cell"], axis=1)
        area = abs(np.linalg.det(fit["cell"])) if np.all(np.isfinite(fit["cell"])) else 0.0
        if len(fit["basis"]) == 0 or area < 0.5 * a_range[0] ** 2 or np.max(lengths) > 3 * a_range[1]:
            continue  # the refinement left a degenerate or implausible cell
        if len(fit["basis"]) > int(cfg["max_sites"]):
            continue  # more columns per cell than the search considers
        site_sections = analysis.site_cross_sections(den, fit["cell"], fit["origin"], fit["basis"], dose, pixel,
                                                     sigma, background)  # fmt: skip
        groupings = [("sites", np.arange(len(fit["site_label"])))]
        if len(np.unique(fit["site_label"])) < len(fit["site_label"]):
            groupings.append(("clusters", fit["site_label"]))
        for grouping, group in groupings:
            ids = np.unique(group)
            intensity = np.array([np.mean(site_sections[group == g]) for g in ids])
            scale = imaging["cross_section"] if cfg["intensity"] == "absolute" else None
            ranked = assignments(intensity, vocabulary, float(cfg["z_exponent"]), int(cfg["contents_kept"]), scale)
            for combo, err in ranked:
                site_contents = tuple(combo[int(np.flatnonzero(ids == g)[0])] for g in group)
                hypotheses.append(Hypothesis(rank, source, grouping, fit["cell"], fit["origin"], fit["basis"],
                                             site_contents, err, expert))  # fmt: skip
    return den, expert, hypotheses


def verify_ncc(h: Hypothesis, den: np.ndarray, imaging: dict, verify_cfg: dict) -> float:
    image = verifier.render(h.cell, h.basis, h.numbers(), h.origin, imaging["shape"], imaging["pixel"], verify_cfg)
    return ncc(image, den)


@dataclass
class Attempts:
    """Everything the closed loop can look at for one image: the first analysis and the rollback one."""

    first: tuple[np.ndarray, int, list[Hypothesis]]
    rollback: tuple[np.ndarray, int, list[Hypothesis]] | None


def prepare(counts: np.ndarray, dose: float, imaging: dict, cfg: dict, verify_cfg: dict) -> Attempts:
    """Both analyses with the verification NCC of every hypothesis the loop may try (at most max_retries + 1
    each); the rollback analysis only when the first analysis's expert is not already the strongest."""
    first = analyse(counts, dose, imaging, cfg)
    rollback = analyse(counts, dose, imaging, cfg, STRONGEST) if first[1] != STRONGEST else None
    for den, _, hyps in (first, rollback) if rollback is not None else (first,):
        for h in hyps[: int(cfg["max_retries"]) + 1]:
            h.ncc = verify_ncc(h, den, imaging, verify_cfg)
    return Attempts(first, rollback)


def candidates(attempts: Attempts, cfg: dict) -> list[Hypothesis]:
    limit = int(cfg["max_retries"]) + 1
    out = list(attempts.first[2][:limit])
    if attempts.rollback is not None:
        out += attempts.rollback[2][:limit]
    return out


def energy_requests(attempts: Attempts, cfg: dict) -> list[Hypothesis]:
    """Hypotheses whose MLIP energy the loop may need: those passing the image check, and every tried one
    (the fallback compares them), plus the feed-forward pick."""
    tried = candidates(attempts, cfg)
    return ([attempts.first[2][0]] if attempts.first[2] else []) + tried


def feed_forward(attempts: Attempts) -> dict:
    hyps = attempts.first[2]
    if not hyps:
        return {"hypothesis": None, "retries": 0, "verified": False, "expert": attempts.first[1]}
    return {"hypothesis": hyps[0], "retries": 0, "verified": False, "expert": attempts.first[1]}


def closed_loop(attempts: Attempts, cfg: dict, energy) -> dict:
    """Verify in rank order; roll back to the strongest expert; fall back to the best NCC the MLIP accepts."""
    limit = int(cfg["max_retries"]) + 1
    tried: list[Hypothesis] = []
    for _, expert, hyps in [a for a in (attempts.first, attempts.rollback) if a is not None]:
        for h in hyps[:limit]:
            tried.append(h)
            if h.ncc >= cfg["ncc_accept"] and energy(h) <= cfg["energy_window"]:
                return {"hypothesis": h, "retries": len(tried) - 1, "verified": True, "expert": expert}
    if not tried:
        return {"hypothesis": None, "retries": 0, "verified": False, "expert": attempts.first[1]}
    plausible = [h for h in tried if energy(h) <= cfg["energy_window"]] or tried
    best = max(plausible, key=lambda h: h.ncc)
    return {"hypothesis": best, "retries": len(tried), "verified": False, "expert": best.expert}
