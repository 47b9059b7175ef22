"""APT's claims as functions of the evaluate stage's metrics (see repro.reporting.claims).

Differences between methods carry a percentile bootstrap interval over held-out sequence groups (windows of
one protein, and the models of an NMR ensemble, are resampled together), and pass only when the whole
interval clears the test. The tokenizers train on the training chains and are scored on the held-out ones;
the fold-class probes are cross-fitted instead, over every chain in folds of whole sequence groups (each
window scored by probes fitted on the other folds, so no protein is ever both in a probe's fit and its
evaluation), because the held-out chains alone are too few groups for the probes' intervals; the tokenizers
having seen a chain does not show them its fold-class label. Smoke scale: the decoder is a regression
decoder (Kabsch-RMSD + distance-matrix loss), a stand-in for the paper's flow-matching decoder; the fold
classes are a DSSP-content proxy for CATH.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import stats

from repro.reporting.claims import ClaimSpec, Measured, Test, bootstrap_interval, learning_check, skill_over_trivial

BOOTSTRAP = {"n_resamples": 2000, "seed": 0}


def _spearman(*columns: np.ndarray) -> float:
    means = np.array([np.mean(c) for c in columns])
    if not np.all(np.isfinite(means)):
        return float("nan")
    return float(stats.spearmanr(np.arange(len(means)), means).statistic)


def coarse_to_fine(m: Mapping[str, Any]) -> Measured:
    """Spearman correlation of APT's mean held-out C-alpha RMSD with the number of kept tokens k = 1..K."""
    per_group = np.asarray(m["apt_rmsd_by_k_per_group"], dtype=float)  # [K, groups]
    result = bootstrap_interval(list(per_group), _spearman, paired=True, **BOOTSTRAP)
    result.details = {"mean_rmsd_by_k": np.mean(per_group, axis=1).tolist(), "groups": int(per_group.shape[1])}
    return result


def _paired_mean(a, b) -> Measured:
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    result = bootstrap_interval(diff, np.mean, **BOOTSTRAP)
    result.details = {"a_mean": float(np.mean(a)), "b_mean": float(np.mean(b)), "groups": int(diff.size)}
    return result


def global_vs_local(m: Mapping[str, Any]) -> Measured:
    """APT's RMSD minus the local tokenizer's at equal bits (all K tokens), mean over held-out groups."""
    return _paired_mean(m["rmsd_at_k_per_group"]["apt"], m["rmsd_at_k_per_group"]["local"])


def nested_vs_ablation(m: Mapping[str, Any]) -> Measured:
    """Ablation's RMSD minus APT's when both decode only the first K/4 tokens."""
    return _paired_mean(m["prefix_rmsd_per_group"]["apt_no_nested"], m["prefix_rmsd_per_group"]["apt"])


def probe_gain(m: Mapping[str, Any]) -> Measured:
    """Probe accuracy on APT's global tokens minus on the local tokens concatenated (cross-fitted, per sequence
    group): the same number of features (K tokens x c code dimensions each), so the probes differ only in the
    tokens."""
    probe = m["probe"]
    dims = probe["dimensions"]
    if dims["apt_global"] != dims["local_concatenated"]:
        raise ValueError(f"probe features differ in size: {dims}")
    return _paired_mean(probe["correct_per_group"]["apt_global"], probe["correct_per_group"]["local_concatenated"])


def reconstruction_skill(variant: str):
    """Per held-out group, the variant's C-alpha RMSD from all K tokens against the medoid training window's."""

    def measure(m: Mapping[str, Any]) -> Measured:
        return skill_over_trivial(m["rmsd_at_k_per_group"][variant], m["medoid_rmsd_per_group"], **BOOTSTRAP)

    return measure


def probe_skill(name: str):
    """Per sequence group, the cross-fitted probe's error rate against the class prior's (the majority class of
    the same fold's fit windows)."""

    def measure(m: Mapping[str, Any]) -> Measured:
        correct = m["probe"]["correct_per_group"]
        errors = 1.0 - np.asarray(correct[name], dtype=float)
        return skill_over_trivial(errors, 1.0 - np.asarray(correct["class_prior"], dtype=float), **BOOTSTRAP)

    return measure


TOKENIZERS = {
    "apt": "APT (global tokens, nested dropout) with its decoder",
    "local": "the local tokenizer with its decoder",
    "apt_no_nested": "the global tokenizer without nested dropout with its decoder",
}
PROBES = {"apt_global": "the probe on APT's tokens", "local_concatenated": "the probe on the local tokens"}


def shrink_gain(m: Mapping[str, Any]) -> Measured:
    """Secondary-structure composition gap of a shrunk decode to a random other window minus to its own."""
    s = m["shrink"]
    return _paired_mean(s["gap_to_other_per_group"], s["gap_to_own_per_group"])


CLAIMS = [
    *[
        learning_check(
            f"learn_{variant}",
            label,
            "the medoid training window (a structure that ignores the tokens)",
            reconstruction_skill(variant),
            error="C-alpha RMSD per held-out group, all K tokens",
        )
        for variant, label in TOKENIZERS.items()
    ],
    *[
        learning_check(
            f"learn_probe_{name}",
            label,
            "the class prior (the majority class of the same fold's fit windows)",
            probe_skill(name),
            error="error rate (cross-fitted over every chain in folds of whole sequence groups) per group",
        )
        for name, label in PROBES.items()
    ],
    ClaimSpec(
        "apt_coarse_to_fine",
        "paper",
        "Coarse to fine: APT's held-out C-alpha RMSD decreases with the number of kept tokens k = 1..K (Spearman "
        "<= -0.9, bootstrap over held-out groups; smoke: regression decoder standing in for flow matching)",
        Test("<=", -0.9),
        coarse_to_fine,
        reported="coarse_to_fine",
        rests_on=("learn_apt",),
    ),
    ClaimSpec(
        "apt_global_beats_local_equal_bits",
        "paper",
        "At equal bits (K tokens of the same FSQ levels), APT's global tokens reconstruct held-out windows with "
        "lower C-alpha RMSD than a local-neighbourhood tokenizer: RMSD(APT) - RMSD(local) <= 0 (smoke: regression "
        "decoder for both)",
        Test("<=", 0.0),
        global_vs_local,
        reported="reconstruction",
        rests_on=("learn_apt", "learn_local"),
    ),
    ClaimSpec(
        "apt_nested_dropout_makes_prefixes_decodable",
        "paper",
        "Nested dropout is what makes a prefix decode: from the first K/4 tokens the ablation trained without it "
        "has a higher held-out RMSD than APT (difference > 0)",
        Test(">", 0.0),
        nested_vs_ablation,
        reported="coarse_to_fine",
        rests_on=("learn_apt", "learn_apt_no_nested"),
    ),
    ClaimSpec(
        "apt_probe_beats_local_equal_size",
        "paper",
        "A non-linear probe of the fold-class proxy (mainly-alpha / mainly-beta / alpha-beta from DSSP content, "
        "standing in for CATH class) is more accurate on APT's global tokens than on the local tokens at the same "
        "number of features (K tokens x c code dimensions, concatenated; accuracy difference > 0, the probes "
        "cross-fitted over every chain in folds of whole sequence groups, the tokenizers' training chains "
        "included: no protein is both in a probe's fit and in its evaluation)",
        Test(">", 0.0),
        probe_gain,
        reported="probing",
        rests_on=("learn_apt", "learn_local", "learn_probe_apt_global", "learn_probe_local_concatenated"),
    ),
    ClaimSpec(
        "apt_zero_shot_shrinking",
        "paper",
        "Zero-shot shrinking: decoding all tokens at L' = 0.75 L keeps the window's secondary-structure "
        "composition (helix + strand fraction gap to the original smaller than to a random other window; "
        "difference > 0)",
        Test(">", 0.0),
        shrink_gain,
        reported="shrinking",
        rests_on=("learn_apt",),
    ),
    ClaimSpec(
        "apt_kabsch_rmsd_invariant",
        "check",
        "Kabsch RMSD (the torch loss) is invariant to a random rotation and translation of the target: largest "
        "change <= 1e-5 Å",
        Test("<=", 1e-5),
        lambda m: m["checks"]["kabsch_rmsd_max_change_under_rigid_motion"],
    ),
    ClaimSpec(
        "apt_kabsch_matches_numpy",
        "check",
        "The torch Kabsch RMSD equals repro.metrics.protein_geometry.rmsd (numpy SVD) on the decoded windows: largest "
        "difference <= 1e-4 Å",
        Test("<=", 1e-4),
        lambda m: m["checks"]["kabsch_rmsd_max_diff_torch_vs_numpy"],
    ),
    ClaimSpec(
        "apt_fsq_on_grid",
        "check",
        "FSQ outputs lie on the level grid: largest distance of a scaled code from its integer level (in range) = 0",
        Test("<=", 0.0),
        lambda m: m["checks"]["fsq_max_grid_error"] if m["checks"]["fsq_in_range"] else float("nan"),
    ),
    ClaimSpec(
        "apt_fsq_straight_through",
        "check",
        "The straight-through rounding passes the gradient unchanged: largest |d round_ste(x)/dx - 1| = 0",
        Test("<=", 0.0),
        lambda m: m["checks"]["ste_max_gradient_error"],
    ),
    ClaimSpec(
        "apt_tokens_invariant",
        "check",
        "Tokens are invariant to rigid motions of the input (invariant residue features): largest change of a "
        "pre-quantisation token value under a random rotation and translation <= 1e-3",
        Test("<=", 1e-3),
        lambda m: m["checks"]["token_max_abs_change_under_rigid_motion"],
    ),
]
