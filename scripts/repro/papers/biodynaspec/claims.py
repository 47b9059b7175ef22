"""BioDynaSpec's claims as functions of the evaluate stage's metrics (see repro.claims).

R_s comparisons use every generated sample of every held-out trajectory (``r_s_per_sample`` per item
in metrics.json): the baseline's mean R_s minus BioDynaSpec's, with a percentile-bootstrap interval that
resamples (trajectory, sample) draws of each model. Full-scale claims compare our ATLAS-test numbers
with the paper's (``metrics["reported"]``, copied from reported.yaml by evaluate).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from repro.claims import ClaimSpec, Measured, Test, bootstrap_interval, deviation_from_reported

# reported.yaml key -> (summary metric, tolerance kind, tolerance): our tolerances around the paper's numbers.
FULL_SCALE = {
    "r_250": ("r_s_report", "rel", 0.10),
    "rmwd": ("rmwd", "rel", 0.10),
    "md_pca_w2": ("md_pca_w2", "rel", 0.10),
    "joint_pca_w2": ("joint_pca_w2", "rel", 0.10),
    "pca_psd_logcorr": ("pca_psd_logcorr", "abs", 0.05),
    "cfre": ("cfre", "abs", 0.05),
}


def per_sample_rs(m: Mapping[str, Any], model: str) -> np.ndarray:
    """R_s of every sample of every held-out trajectory (at the report length, or the trajectory's length when
    shorter); NaN propagates."""
    values = [v for item in m["per_item"][model].values() for v in item.get("r_s_per_sample", [])]
    if not values:
        raise ValueError(f"{model}: no generated trajectory")
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _rs_gain(baseline: str) -> Callable[[Mapping[str, Any]], Measured]:
    def measure(m: Mapping[str, Any]) -> Measured:
        ours, theirs = per_sample_rs(m, "biodynaspec"), per_sample_rs(m, baseline)
        result = bootstrap_interval((theirs, ours), lambda b, a: np.mean(b) - np.mean(a))
        result.details |= {"biodynaspec": float(np.mean(ours)), baseline: float(np.mean(theirs)), "draws": ours.size}
        return result

    return measure


CLAIMS = [
    ClaimSpec(
        "iwfd_generator_path_exact",
        "check",
        "The generator's own path (anchored windows -> window spectrum -> float32 slots -> inverse -> compose) "
        "reconstructs a held-out C-alpha trajectory: largest per-frame RMSD after superposition < 1e-3 Å",
        Test("<", 1e-3),
        lambda m: m["iwfd_checks"]["generator_path"]["composed_rmsd_max_A"],
    ),
    ClaimSpec(
        "iwfd_parseval",
        "check",
        "Parseval holds per window (one-sided spectrum, interior bins counted twice)",
        Test("<", 1e-9),
        lambda m: m["iwfd_checks"]["parseval_max_rel_dev"],
    ),
    ClaimSpec(
        "iwfd_band_truncation_monotone",
        "check",
        "Keeping more low bands never increases the reconstruction error (orthogonality of the DFT)",
        Test("<=", 1e-12),
        lambda m: m["iwfd_checks"]["truncation_max_increase_A"],
    ),
    ClaimSpec(
        "synthetic_cfre_converges",
        "check",
        "On ANM trajectories the C-alpha covariance error against the exact kT H^+ shrinks with length: "
        "CFRE(all frames) / CFRE(short) < 0.5 (1/sqrt(N) sampling error)",
        Test("<", 0.5),
        lambda m: m["synthetic"]["cfre_all"] / m["synthetic"]["cfre_short"],
    ),
    ClaimSpec(
        "synthetic_spectral_beats_iid_psd",
        "check",
        "On ANM trajectories a spectral generator (independent Gaussian Fourier coefficients) has a higher "
        "PCA-PSD-LogCorr (our definition) than i.i.d. frames from the same per-atom Gaussians (difference > 0)",
        Test(">", 0.0),
        lambda m: m["synthetic"]["logcorr_spectral"] - m["synthetic"]["logcorr_iid"],
    ),
    *[
        ClaimSpec(
            f"r_s_vs_{name}",
            "paper",
            f"BioDynaSpec has lower R_s than the {label} on held-out trajectories: {label}'s mean R_s minus "
            "BioDynaSpec's > 0 (R_s at min(s, trajectory length), every generated sample of every held-out "
            "trajectory, bootstrap interval)",
            Test(">", 0.0),
            _rs_gain(model),
            reported="r_250",
        )
        for name, model, label in (
            ("static", "static", "static copy of frame 0"),
            ("time_domain", "time_ar", "time-domain AR baseline"),
            ("mdgen_style", "flow", "MDGen-style flow-matching baseline"),
            ("no_irfc", "biodynaspec_noirfc", "ablation without IRFC"),
        )
    ],
    *[
        ClaimSpec(
            f"paper_{key}",
            "paper",
            f"BioDynaSpec {metric} on the ATLAS test set within {tol:g}{' (relative)' if kind == 'rel' else ''} "
            "of the paper's number",
            Test("<=", tol),
            deviation_from_reported(
                key, lambda m, metric=metric: m["summary"]["biodynaspec"][metric], relative=kind == "rel"
            ),
            reported=key,
            scales=("full",),
        )
        for key, (metric, kind, tol) in FULL_SCALE.items()
    ],
]
