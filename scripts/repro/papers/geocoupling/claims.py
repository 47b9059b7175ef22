"""GeoCoupling's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Measured, Test, seed_interval

DIVERSITY = "unique_pairs"


def _per_seed(m: Mapping[str, Any], coupling: str, key: str) -> np.ndarray:
    return np.asarray(m["per_coupling"][coupling][key], dtype=float)


def _difference(coupling: str, baseline: str, key: str = "consistency"):
    def measure(m: Mapping[str, Any]) -> Measured:
        return seed_interval(_per_seed(m, coupling, key) - _per_seed(m, baseline, key))

    return measure


def _ratio(coupling: str, baseline: str, key: str = DIVERSITY):
    def measure(m: Mapping[str, Any]) -> Measured:
        return seed_interval(_per_seed(m, coupling, key) / _per_seed(m, baseline, key))

    return measure


def _counts(m: Mapping[str, Any]) -> float:
    e = m["enumeration"]
    return float(np.abs(e["walks"] - e["walks_reference"]) + np.abs(e["conformations"] - e["conformations_formula"]))


def _brute_force(m: Mapping[str, Any]) -> float:
    e = m["enumeration"]
    return float(np.max([e["brute_force_energy_max_error"], e["brute_force_ground_state_max_error"]]))


def _curves(m: Mapping[str, Any]) -> float:
    c = m["couplings_checks"]
    return float(np.max([c["curve_endpoint_error"], c["curve_largest_decrease"]]))


CLAIMS = [
    ClaimSpec(
        "geocoupling_enumeration_counts",
        "check",
        "Exhaustive enumeration: the self-avoiding walk count equals OEIS A001411 and the symmetry-reduced "
        "conformation count equals (c - 4) / 8 + 1 (sum of absolute count errors = 0)",
        Test("<=", 0.0),
        _counts,
    ),
    ClaimSpec(
        "geocoupling_brute_force_energies",
        "check",
        "Energies of random (sequence, conformation) pairs and ground states (energy and degeneracy) of random "
        "designable sequences computed site by site equal the enumerated ones (largest error = 0)",
        Test("<=", 0.0),
        _brute_force,
    ),
    ClaimSpec(
        "geocoupling_curves_valid",
        "check",
        "Every coupling curve passes through (0, 0) and (1, 1) and never decreases (largest defect <= 1e-12)",
        Test("<=", 1e-12),
        _curves,
    ),
    ClaimSpec(
        "geocoupling_time_pairs_on_curve",
        "check",
        "Training time pairs of every curve coupling lie within the jitter of their curve point (largest excess "
        "<= 1e-6)",
        Test("<=", 1e-6),
        lambda m: m["couplings_checks"]["time_pairs_beyond_jitter"],
    ),
    ClaimSpec(
        "geocoupling_learned_beats_synchronous",
        "paper",
        "HP lattice (stand-in for SBDD / protein co-design; chains variant: PMI consistency), masked discrete "
        "co-design model: consistency (valid walk at the sequence's ground-state energy) of the GP-EI learned curve minus synchronous, mean "
        "over seeds with t interval >= 0",
        Test(">=", 0.0),
        _difference("learned", "synchronous"),
        reported="learned_beats_sync",
    ),
    ClaimSpec(
        "geocoupling_learned_beats_random",
        "paper",
        "HP lattice: consistency of the learned curve minus the random coupling (independent uniform times in "
        "training, diagonal at sampling), mean over seeds with t interval >= 0",
        Test(">=", 0.0),
        _difference("learned", "random"),
        reported="learned_beats_random",
    ),
    ClaimSpec(
        "geocoupling_diversity_vs_synchronous",
        "paper",
        "HP lattice: diversity (distinct valid (sequence, conformation) pairs per sample) of the learned curve "
        "over synchronous, t interval over seeds >= 0.9 (not lower by more than 10%)",
        Test(">=", 0.9),
        _ratio("learned", "synchronous"),
        reported="diversity",
    ),
    ClaimSpec(
        "geocoupling_diversity_vs_random",
        "paper",
        "HP lattice: diversity of the learned curve over the random coupling, t interval over seeds >= 0.9",
        Test(">=", 0.9),
        _ratio("learned", "random"),
        reported="diversity",
    ),
    ClaimSpec(
        "geocoupling_structure_leading",
        "paper",
        "HP lattice: the learned curve t_seq = t_struct ** alpha is structure-leading, log(alpha) > 0 (t interval "
        "over the per-seed searches); reported as found, the toy need not share the paper's finding",
        Test(">", 0.0),
        lambda m: seed_interval(np.log(np.asarray(m["learned_alpha"], dtype=float))),
        reported="structure_leading",
    ),
]

# Checks of the exact enumeration, which only the HP-lattice benchmark has.
HP_ONLY = ("geocoupling_enumeration_counts", "geocoupling_brute_force_energies")


def claims_for(benchmark: str) -> list[ClaimSpec]:
    """The claims a run on ``benchmark`` (hp_lattice or chains) is checked against."""
    return [c for c in CLAIMS if benchmark == "hp_lattice" or c.id not in HP_ONLY]
