"""PDRF's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Measured, Test, seed_interval


def paired_gain(m: Mapping[str, Any], method: str, reference: str, score: str) -> Measured:
    """method's score minus reference's, per shared seed, with a t interval over seeds."""
    ours, theirs = m["skill"][method], m["skill"][reference]
    seeds = sorted(set(ours) & set(theirs))
    out = seed_interval([ours[s][score] - theirs[s][score] for s in seeds])
    out.details |= {
        method: float(np.mean([ours[s][score] for s in seeds])),
        reference: float(np.mean([theirs[s][score] for s in seeds])),
        "score": score,
    }
    return out


CLAIMS = [
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
        "Data-space RF >= velocity RF (same tiny U-Net, NFE 4, 3 seeds): late-lead CSI at the highest threshold, "
        "data-space minus velocity >= 0 over the whole t interval",
        Test(">=", 0.0),
        lambda m: paired_gain(m, "data_rf", "velocity_rf", "late_csi_top"),
        reported="drift_suppression",
    ),
    ClaimSpec(
        "pdrf_teacher_raises_late_csi",
        "paper",
        "The soft SL teacher raises late-lead skill: PDRF (data-space + teacher) minus data-space RF without "
        "teacher, late-lead CSI-M > 0 over the whole t interval (3 seeds)",
        Test(">", 0.0),
        lambda m: paired_gain(m, "pdrf", "data_rf", "late_csi_m"),
        reported="sl_teacher",
    ),
    ClaimSpec(
        "pdrf_beats_velocity_rf_csi_m",
        "paper",
        "Event skill: PDRF minus velocity-parameterised RF, CSI-M > 0 over the whole t interval (3 seeds)",
        Test(">", 0.0),
        lambda m: paired_gain(m, "pdrf", "velocity_rf", "csi_m"),
        reported="event_skill",
    ),
    ClaimSpec(
        "pdrf_sl_beats_persistence",
        "check",
        "Sanity of the simulator and the motion estimate: SL extrapolation minus persistence, late-lead CSI-M "
        "> 0 (not evidence for the paper)",
        Test(">", 0.0),
        lambda m: m["skill"]["sl_extrapolation"]["s0"]["late_csi_m"] - m["skill"]["persistence"]["s0"]["late_csi_m"],
        reported="sl_teacher",
    ),
]
