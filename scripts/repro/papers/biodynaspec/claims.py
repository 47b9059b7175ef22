"""BioDynaSpec's claims as functions of the evaluate stage's metrics (see repro.reporting.claims).

R_s comparisons use every generated sample of every held-out trajectory (``r_s_per_sample`` per item
in metrics.json): the mean over trajectories of the baseline's mean R_s minus BioDynaSpec's, with a
two-stage percentile-bootstrap interval: held-out trajectories are resampled (they are the units a new
protein would add), then each model's samples within each drawn trajectory (generation noise). With few
held-out trajectories the interval is wide, as it should be. Learning checks compare each trained
generator's training objective (denoising or flow-matching loss) on the held-out windows with that of its
own untrained initialisation, window by window (``heldout_loss``): R_s cannot tell a generator that learned
from one that emits noise of the right size.
Full-scale claims compare our ATLAS-test numbers with the paper's (``metrics["reported"]``, copied from
reported.yaml by evaluate).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import (
    ClaimSpec,
    Interval,
    Measured,
    Test,
    deviation_from_reported,
    learning_check,
    skill_over_trivial,
)

# reported.yaml key -> (summary metric, tolerance kind, tolerance): our tolerances around the paper's numbers.
FULL_SCALE = {
    "r_250": ("r_s_report", "rel", 0.10),
    "rmwd": ("rmwd", "rel", 0.10),
    "md_pca_w2": ("md_pca_w2", "rel", 0.10),
    "joint_pca_w2": ("joint_pca_w2", "rel", 0.10),
    "pca_psd_logcorr": ("pca_psd_logcorr", "abs", 0.05),
    "cfre": ("cfre", "abs", 0.05),
}


BOOTSTRAP_RESAMPLES = 2000


def per_item_rs(m: Mapping[str, Any], model: str, field: str = "r_s_per_sample") -> dict[str, np.ndarray]:
    """Per held-out trajectory: R_s of every generated sample (at the report length, or the trajectory's
    length when shorter); NaN propagates."""
    items = {
        key: np.array([np.nan if v is None else v for v in item[field]], dtype=float)
        for key, item in m["per_item"][model].items()
    }
    if not items or not all(v.size for v in items.values()):
        raise ValueError(f"{model}: no generated trajectory")
    return items


def hierarchical_gain(ours: dict[str, np.ndarray], theirs: dict[str, np.ndarray], seed: int = 0) -> Measured:
    """Mean over trajectories of (baseline's mean R_s - ours), with a 95 % percentile interval from a two-stage
    bootstrap: draw the held-out trajectories with replacement, then, within each drawn trajectory, each
    model's samples with replacement."""
    keys = sorted(ours)
    if sorted(theirs) != keys:
        raise KeyError(f"models evaluated on different trajectories: {keys} vs {sorted(theirs)}")
    value = float(np.mean([np.mean(theirs[k]) - np.mean(ours[k]) for k in keys]))
    method = "two-stage percentile bootstrap 95% (trajectories, then samples within each)"
    if not all(np.all(np.isfinite(d[k])) for d in (ours, theirs) for k in keys):
        return Measured(float("nan"), Interval(float("nan"), float("nan"), method, BOOTSTRAP_RESAMPLES))
    rng = np.random.default_rng(seed)
    # per trajectory, BOOTSTRAP_RESAMPLES draws of (baseline mean - ours) over resampled samples
    within = np.stack(
        [
            rng.choice(theirs[k], (BOOTSTRAP_RESAMPLES, theirs[k].size)).mean(1)
            - rng.choice(ours[k], (BOOTSTRAP_RESAMPLES, ours[k].size)).mean(1)
            for k in keys
        ]
    )  # [trajectories, resamples]
    picks = rng.integers(0, len(keys), (BOOTSTRAP_RESAMPLES, len(keys)))
    draws = within[picks, np.arange(BOOTSTRAP_RESAMPLES)[:, None]].mean(1)
    low, high = np.percentile(draws, [2.5, 97.5])
    return Measured(value, Interval(float(low), float(high), method, BOOTSTRAP_RESAMPLES), {"trajectories": len(keys)})


def _rs_gain(baseline: str) -> Callable[[Mapping[str, Any]], Measured]:
    def measure(m: Mapping[str, Any]) -> Measured:
        ours, theirs = per_item_rs(m, "biodynaspec"), per_item_rs(m, baseline)
        result = hierarchical_gain(ours, theirs)
        result.details |= {
            "biodynaspec": {k: float(np.mean(v)) for k, v in ours.items()},
            baseline: {k: float(np.mean(v)) for k, v in theirs.items()},
            "samples": int(np.sum([v.size for v in ours.values()])),
        }
        return result

    return measure


LEARNED = {
    "biodynaspec": "BioDynaSpec (IWFD + band AR + IRFC)",
    "biodynaspec_noirfc": "BioDynaSpec without IRFC",
    "time_ar": "the time-domain AR diffusion baseline",
    "flow": "the MDGen-style flow-matching baseline",
}


def _skill(model: str) -> Callable[[Mapping[str, Any]], Measured]:
    """Held-out training objective per window, trained network against its untrained initialisation."""

    def measure(m: Mapping[str, Any]) -> Measured:
        losses = m["heldout_loss"][model]
        return skill_over_trivial(losses["loss"], losses["init_loss"])

    return measure


CLAIMS = [
    *[
        learning_check(
            f"learn_{model}",
            label,
            "its untrained initialisation (same architecture, seed and sampler)",
            _skill(model),
            error="training objective (denoising / flow-matching loss) per held-out window",
        )
        for model, label in LEARNED.items()
    ],
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
            "BioDynaSpec's, averaged over held-out trajectories, > 0 (R_s at min(s, trajectory length), every "
            "generated sample, bootstrap within trajectories)",
            Test(">", 0.0),
            _rs_gain(model),
            reported="r_250",
            rests_on=("learn_biodynaspec",) + ((f"learn_{model}",) if model in LEARNED else ()),
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
            rests_on=("learn_biodynaspec",),
        )
        for key, (metric, kind, tol) in FULL_SCALE.items()
    ],
]
