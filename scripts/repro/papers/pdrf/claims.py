"""PDRF's claims as functions of the evaluate stage's metrics (see repro.reporting.claims).

Paper claims compare trained flows on the same test events: the point value is the difference of the pooled
score, the interval the percentile interval of the same difference over ``metrics["bootstrap"]`` (test events
resampled the same way for both methods). Each rests on the learning checks of the two models: per-event mean
squared error at least 20 % below persistence's, the trivial nowcast.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Interval, Measured, Test, learning_check, skill_over_trivial

LEARNING_MARGIN = 0.2
TRAINED = ("pdrf", "data_rf", "velocity_rf")


def paired_gain(m: Mapping[str, Any], method: str, reference: str, score: str) -> Measured:
    """method's pooled score minus reference's, with the percentile interval of the paired event bootstrap."""
    ours, theirs = m["skill"][method][score], m["skill"][reference][score]
    boot = m["bootstrap"]
    diff = np.asarray(boot["scores"][score][method], float) - np.asarray(boot["scores"][score][reference], float)
    finite = np.all(np.isfinite(diff))
    low, high = np.percentile(diff, [2.5, 97.5]) if finite else (np.nan, np.nan)
    return Measured(
        ours - theirs,
        Interval(float(low), float(high), f"percentile bootstrap 95% over {boot['resampled']}", int(boot["n"])),
        {method: ours, reference: theirs, "score": score},
    )


def learned(model: str):
    def measure(m: Mapping[str, Any]) -> Measured:
        return skill_over_trivial(m["event_mse"][model], m["event_mse"]["persistence"])

    return learning_check(
        f"learn_{model}", model, "persistence", measure, margin=LEARNING_MARGIN, error="per-event MSE"
    )


CLAIMS = [
    *(learned(model) for model in TRAINED),
    ClaimSpec(
        "pdrf_last_step_is_network_output",
        "check",
        "Data-space sampling: the last Euler step lands exactly on the network's prediction x1_hat (max |diff| "
        "<= 1e-5 on the [-1, 1] scale, float32), an identity of v = (x1_hat - x_t) / (1 - t)",
        Test("<=", 1e-5),
        lambda m: m["checks"]["last_step_max_abs_diff"],
        reported="restoring_effect",
    ),
    ClaimSpec(
        "pdrf_oracle_perturbation_vanishes",
        "check",
        "With an oracle x1_hat, a perturbation injected at t = 0.5 vanishes by t = 1 under data-space sampling "
        "(residual / perturbation <= 1e-6)",
        Test("<=", 1e-6),
        lambda m: m["checks"]["data_space_residual_ratio"],
        reported="restoring_effect",
    ),
    ClaimSpec(
        "pdrf_oracle_velocity_keeps_perturbation",
        "check",
        "With the oracle velocity x1 - x0, the same perturbation persists to t = 1 (residual / perturbation "
        ">= 0.99): a velocity field has no restoring term",
        Test(">=", 0.99),
        lambda m: m["checks"]["velocity_residual_ratio"],
        reported="restoring_effect",
    ),
    ClaimSpec(
        "pdrf_data_space_beats_velocity",
        "paper",
        "Data-space RF >= velocity RF (same tiny U-Net, NFE 4, one training seed): late-lead CSI at the highest "
        "threshold, data-space minus velocity >= 0 over the whole interval (paired bootstrap over test events)",
        Test(">=", 0.0),
        lambda m: paired_gain(m, "data_rf", "velocity_rf", "late_csi_top"),
        reported="drift_suppression",
        rests_on=("learn_data_rf", "learn_velocity_rf"),
    ),
    ClaimSpec(
        "pdrf_teacher_raises_late_csi",
        "paper",
        "The soft SL teacher raises late-lead skill: PDRF (data-space + teacher) minus data-space RF without "
        "teacher, late-lead CSI-M > 0 over the whole interval (paired bootstrap over test events)",
        Test(">", 0.0),
        lambda m: paired_gain(m, "pdrf", "data_rf", "late_csi_m"),
        reported="sl_teacher",
        rests_on=("learn_pdrf", "learn_data_rf"),
    ),
    ClaimSpec(
        "pdrf_beats_velocity_rf_csi_m",
        "paper",
        "Event skill: PDRF minus velocity-parameterised RF, CSI-M > 0 over the whole interval (paired bootstrap "
        "over test events)",
        Test(">", 0.0),
        lambda m: paired_gain(m, "pdrf", "velocity_rf", "csi_m"),
        reported="event_skill",
        rests_on=("learn_pdrf", "learn_velocity_rf"),
    ),
    ClaimSpec(
        "pdrf_sl_beats_persistence",
        "check",
        "Sanity of the simulator and the motion estimate: SL extrapolation minus persistence, late-lead CSI-M "
        "> 0 (paired bootstrap over test events; not evidence for the paper)",
        Test(">", 0.0),
        lambda m: paired_gain(m, "sl_extrapolation", "persistence", "late_csi_m"),
        reported="sl_teacher",
    ),
]
