"""GeoCoupling's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Measured, Test, learning_check, seed_interval, skill_over_trivial

MODEL = (
    "co-design model on 12-residue backbone windows of the structures source's chains (torsion flow matching x "
    "masked sequence tokens, one small MLP; stand-in for MultiFlow / DPLM-2 / La-Proteina-class models)"
)
TRAINED = ("learned", "synchronous", "random")


def _per_seed(m: Mapping[str, Any], coupling: str, key: str) -> np.ndarray:
    return np.asarray(m["per_coupling"][coupling][key], dtype=float)


def _difference(coupling: str, baseline: str, key: str):
    def measure(m: Mapping[str, Any]) -> Measured:
        return seed_interval(_per_seed(m, coupling, key) - _per_seed(m, baseline, key))

    return measure


def _ratio(coupling: str, baseline: str, key: str):
    def measure(m: Mapping[str, Any]) -> Measured:
        return seed_interval(_per_seed(m, coupling, key) / _per_seed(m, baseline, key))

    return measure


def _learned(coupling: str):
    """Skill of the coupling's trained generator over its untrained initialisation, in invalid samples."""

    def measure(m: Mapping[str, Any]) -> Measured:
        s = m["samples"][coupling]
        model = 1.0 - np.asarray(s["trained"]["valid"], dtype=float)
        trivial = 1.0 - np.asarray(s["untrained"]["valid"], dtype=float)
        return skill_over_trivial(model, trivial, n_resamples=int(m["bootstrap_resamples"]))

    return measure


def _predictor(m: Mapping[str, Any]) -> Measured:
    p = m["predictor_log_loss"]
    return skill_over_trivial(p["predictor"], p["prior"], n_resamples=int(m["bootstrap_resamples"]))


def _counts(m: Mapping[str, Any]) -> float:
    e = m["enumeration"]
    return float(np.abs(e["walks"] - e["walks_reference"]) + np.abs(e["conformations"] - e["conformations_formula"]))


def _brute_force(m: Mapping[str, Any]) -> float:
    e = m["enumeration"]
    return float(np.max([e["brute_force_energy_max_error"], e["brute_force_ground_state_max_error"]]))


def _curves(m: Mapping[str, Any]) -> float:
    c = m["couplings_checks"]
    return float(np.max([c["curve_endpoint_error"], c["curve_largest_decrease"]]))


def _search_spread(m: Mapping[str, Any]) -> float:
    c = m["search_check"]
    best = float(c["grid_best_score"])
    return float(c["grid_spread"] / np.sqrt(np.maximum(best * (1 - best), 1e-12) / c["samples"]))


LEARNING = [
    learning_check(
        f"geocoupling_{coupling}_generator_learned",
        f"{coupling} coupling's generator",
        "its untrained initialisation (same architecture, seeds and sampling curve)",
        _learned(coupling),
        error="fraction of invalid backbones (bond lengths, angles, omega, Ramachandran region or a clash outside "
        "the real chains' distributions)",
    )
    for coupling in TRAINED
]
RESTS = tuple(c.id for c in LEARNING)

CLAIMS = [
    *LEARNING,
    ClaimSpec(
        "geocoupling_predictor_informative",
        "check",
        "The independent sequence -> secondary-structure predictor behind the consistency score beats the training "
        "class prior on the real test windows: per-residue log-loss skill > 0 (paired bootstrap 95%)",
        Test(">", 0.0),
        _predictor,
    ),
    ClaimSpec(
        "geocoupling_enumeration_counts",
        "check",
        "HP lattice of the search check, exhaustive enumeration: the self-avoiding walk count equals OEIS A001411 "
        "and the symmetry-reduced conformation count equals (c - 4) / 8 + 1 (sum of absolute count errors = 0)",
        Test("<=", 0.0),
        _counts,
    ),
    ClaimSpec(
        "geocoupling_brute_force_energies",
        "check",
        "HP lattice: energies of random (sequence, conformation) pairs and ground states (energy and degeneracy) of "
        "random designable sequences computed site by site equal the enumerated ones (largest error = 0)",
        Test("<=", 0.0),
        _brute_force,
    ),
    ClaimSpec(
        "geocoupling_search_reaches_grid_optimum",
        "check",
        "The GP-EI coupling search, run on the HP lattice with an exact factorised denoiser (no training), reaches "
        "the best consistency a dense grid of alpha finds: shortfall <= 2 binomial standard errors",
        Test("<=", 2.0),
        lambda m: float(m["search_check"]["shortfall_in_standard_errors"]),
    ),
    ClaimSpec(
        "geocoupling_search_check_informative",
        "check",
        "The HP-lattice objective of the search check depends on alpha: best minus worst grid consistency >= 2 "
        "binomial standard errors (else the search check above could not fail)",
        Test(">=", 2.0),
        _search_spread,
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
        f"{MODEL}: sequence-structure consistency (PMI, nats per residue, of the generated backbone's DSSP under an "
        "independent sequence -> secondary-structure predictor given the generated sequence) of the GP-EI learned "
        "curve minus synchronous, per seed, t interval over seeds >= 0",
        Test(">=", 0.0),
        _difference("learned", "synchronous", "consistency"),
        reported="learned_beats_sync",
        rests_on=RESTS,
    ),
    ClaimSpec(
        "geocoupling_learned_beats_random",
        "paper",
        "Backbone windows: consistency of the learned curve minus the random coupling (independent uniform times "
        "in training, diagonal at sampling), t interval over seeds >= 0",
        Test(">=", 0.0),
        _difference("learned", "random", "consistency"),
        reported="learned_beats_random",
        rests_on=RESTS,
    ),
    ClaimSpec(
        "geocoupling_validity_vs_synchronous",
        "paper",
        "Backbone windows: physical validity (fraction of generated backbones inside the real chains' bond, angle, "
        "omega and Ramachandran ranges and clash-free) of the learned curve minus synchronous, t interval >= 0",
        Test(">=", 0.0),
        _difference("learned", "synchronous", "validity"),
        reported="diversity",
        rests_on=RESTS,
    ),
    ClaimSpec(
        "geocoupling_validity_vs_random",
        "paper",
        "Backbone windows: validity of the learned curve minus the random coupling, t interval over seeds >= 0",
        Test(">=", 0.0),
        _difference("learned", "random", "validity"),
        reported="diversity",
        rests_on=RESTS,
    ),
    ClaimSpec(
        "geocoupling_diversity_vs_synchronous",
        "paper",
        "Backbone windows: structural diversity (mean pairwise CA distance-matrix RMS of the generated backbones) of "
        "the learned curve over synchronous, t interval over seeds >= 0.9 (not lower by more than 10%)",
        Test(">=", 0.9),
        _ratio("learned", "synchronous", "structure_diversity"),
        reported="diversity",
        rests_on=RESTS,
    ),
    ClaimSpec(
        "geocoupling_diversity_vs_random",
        "paper",
        "Backbone windows: structural diversity of the learned curve over the random coupling, t interval >= 0.9",
        Test(">=", 0.9),
        _ratio("learned", "random", "structure_diversity"),
        reported="diversity",
        rests_on=RESTS,
    ),
    ClaimSpec(
        "geocoupling_structure_leading",
        "paper",
        "Backbone windows: the learned curve t_seq = t_struct ** alpha is structure-leading, log(alpha) > 0 (t "
        "interval over the per-seed searches)",
        Test(">", 0.0),
        lambda m: seed_interval(np.log(np.asarray(m["learned_alpha"], dtype=float))),
        reported="structure_leading",
        rests_on=("geocoupling_learned_generator_learned",),
    ),
]
