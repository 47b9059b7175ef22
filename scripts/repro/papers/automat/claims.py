"""AutoMat's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Measured, Test, bootstrap_interval

SETUP = (
    "STEM2CIF-style reconstruction (Gaussian column fits, intensity clustering, lattice search, CIF) of "
    "incoherent-HAADF monolayer images; deterministic controller in place of the LLM agent, CHGNet in place of "
    "MatterSim, verification by a second imaging model (aberrated-probe convolution)"
)


def _paired(m: Mapping[str, Any], key: str, dose: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    p = m["per_image"]
    sel = np.ones(len(p["dose"]), bool) if dose is None else np.asarray(p["dose"]) == dose
    return np.asarray(p[f"{key}_loop"], float)[sel], np.asarray(p[f"{key}_ff"], float)[sel]


def _mean_difference(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(x) - np.mean(y))


def accuracy_gain(m: Mapping[str, Any]) -> Measured:
    loop, ff = _paired(m, "match")
    return bootstrap_interval([loop, ff], _mean_difference, paired=True, n_resamples=int(m["bootstrap_resamples"]))


def lattice_gain(m: Mapping[str, Any]) -> Measured:
    loop, ff = _paired(m, "lattice_error")
    return bootstrap_interval([ff, loop], _mean_difference, paired=True, n_resamples=int(m["bootstrap_resamples"]))


def energy_gain(m: Mapping[str, Any]) -> Measured:
    """Over the images both methods reconstruct (an image without a structure has no energy)."""
    loop, ff = _paired(m, "energy_error")
    both = np.isfinite(loop) & np.isfinite(ff)
    return bootstrap_interval([ff[both], loop[both]], _mean_difference, paired=True,
                              n_resamples=int(m["bootstrap_resamples"]))  # fmt: skip


def low_dose_advantage(m: Mapping[str, Any]) -> Measured:
    """Accuracy gain at the lowest dose minus the gain at the highest (independent image sets)."""
    lo, hi = np.min(m["doses"]), np.max(m["doses"])
    gain_lo = np.subtract(*_paired(m, "match", lo))
    gain_hi = np.subtract(*_paired(m, "match", hi))
    return bootstrap_interval([gain_lo, gain_hi], _mean_difference, n_resamples=int(m["bootstrap_resamples"]))


CLAIMS = [
    ClaimSpec(
        "automat_rerender_identity",
        "check",
        "The generator re-renders each check truth from its CIF: smallest NCC with the stored noiseless image "
        ">= 1 - 1e-6",
        Test(">=", 1 - 1e-6),
        lambda m: float(m["rerender_min_ncc"]),
    ),
    ClaimSpec(
        "automat_peak_fit_noiseless",
        "check",
        "The two-pass 2-D Gaussian column fit (bright columns, then the dim ones in the residual) on noiseless "
        "check images recovers every interior column position: largest error <= 0.05 Å",
        Test("<=", 0.05),
        lambda m: float(m["peak_fit_max_error"]),
    ),
    ClaimSpec(
        "automat_verifier_is_another_model",
        "check",
        "The verification model is not the generating one: 1 - the largest NCC between its noiseless image of a "
        "check truth and the generator's exceeds the re-render identity's tolerance, 1e-6",
        Test(">", 1e-6),
        lambda m: 1.0 - float(np.max(m["verifier_vs_generator_ncc"])),
    ),
    ClaimSpec(
        "automat_verifier_accepts_truths",
        "check",
        "The verification model accepts the ground truths: the smallest NCC between its noiseless image of a check "
        "truth and the generator's >= the loop's acceptance threshold ncc_accept (0.8)",
        Test(">=", 0.8),
        lambda m: float(np.min(m["verifier_vs_generator_ncc"])),
    ),
    ClaimSpec(
        "automat_noiseless_reconstruction",
        "check",
        "The feed-forward reconstruction of noiseless check images matches the ground truth (StructureMatcher) "
        "for at least 75% of them",
        Test(">=", 0.75),
        lambda m: float(m["noiseless_accuracy"]),
    ),
    ClaimSpec(
        "automat_loop_more_accurate",
        "paper",
        f"{SETUP}: closed-loop verification with rollback-and-retry has higher StructureMatcher accuracy than the "
        "same modules fed forward: accuracy(loop) - accuracy(feed-forward) > 0 over all doses and images, paired "
        "bootstrap 95%",
        Test(">", 0.0),
        accuracy_gain,
        reported="closed_loop",
        rests_on=(),
    ),
    ClaimSpec(
        "automat_loop_lower_lattice_error",
        "paper",
        "The closed loop has lower lattice error (its retries include other lattice candidates: the next peak-"
        "translation cell, the Fourier-fitted cell, a re-analysis after stronger denoising): mean relative in-plane "
        "lattice-parameter error, feed-forward - loop > 0, paired bootstrap 95% over images and doses",
        Test(">", 0.0),
        lattice_gain,
        reported="closed_loop",
        rests_on=(),
    ),
    ClaimSpec(
        "automat_loop_lower_formation_error",
        "paper",
        "The closed loop has lower formation-energy error: |E_f(reconstruction) - E_f(truth)| (CHGNet, eV/atom), "
        "feed-forward - loop > 0, paired bootstrap 95% over the images both reconstruct",
        Test(">", 0.0),
        energy_gain,
        reported="closed_loop",
        rests_on=(),
    ),
    ClaimSpec(
        "automat_gain_largest_at_low_dose",
        "paper",
        "The closed loop helps most where the inverse problem is most ill-posed: accuracy gain at the lowest "
        "dose - gain at the highest dose > 0, bootstrap 95%",
        Test(">", 0.0),
        low_dose_advantage,
        reported="ill_posed",
        rests_on=(),
    ),
]
