"""pai-graphon's claims as functions of the evaluate stage's metrics (see repro.reporting.claims).

Random and Magnitude masks are i.i.d. keep-p draws by construction of the initialisation, so their flatness,
binomial degrees and convergence to the constant graphon are checks; what the paper asserts about the
data-dependent criteria (SNIP, GraSP: convergence to the Factorised Saliency Model's graphon, heterogeneity,
feature selection, NTK alignment) are paper claims. Widths are keyed as strings (as in metrics.json).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.papers.pai_graphon.graphon import bonferroni_z
from repro.reporting.claims import (
    ClaimSpec,
    Interval,
    Measured,
    Test,
    learning_check,
    seed_interval,
    skill_over_trivial,
)

Metrics = Mapping[str, Any]
UNIFORM = ("random", "magnitude")
DATA_DRIVEN = ("snip", "grasp")


def _top(m: Metrics) -> str:
    return str(int(np.max(m["settings"]["widths"])))


def _band(m: Metrics) -> float:
    """Three sampling sd of the mean degree-CV ratio at the largest width over seeds."""
    return float(3.0 * np.sqrt(1.0 / (2.0 * float(_top(m)) * len(m["settings"]["seeds"]))))


def _relabel(out: Measured, method: str) -> Measured:
    interval = out.interval
    return Measured(out.value, Interval(interval.low, interval.high, method, interval.n), out.details)


def fsm_slope(m: Metrics, criterion: str) -> Measured:
    """Per seed: slope of log L2(degree-sorted graphon, FSM prediction) against log width; t interval over seeds."""
    fsm = m["synthetic"][criterion]["fsm"]
    log_w = np.log(np.asarray(fsm["widths"], dtype=float))
    dist = np.asarray(fsm["distance"], dtype=float)  # (width, seed)
    slopes = np.polyfit(log_w, np.log(dist), 1)[0]
    out = seed_interval(slopes)
    out.details["mean_distance"] = dist.mean(axis=1).tolist()
    return out


def fsm_over_constant(m: Metrics, criterion: str) -> Measured:
    """Per seed at the largest width: distance to the FSM graphon / distance to the constant graphon p."""
    fsm = m["synthetic"][criterion]["fsm"]
    ratio = np.asarray(fsm["distance"][-1], dtype=float) / np.asarray(fsm["constant_distance"][-1], dtype=float)
    return seed_interval(ratio)


def cv_excess(m: Metrics, criterion: str) -> Measured:
    """(mean degree-CV ratio - 1) in units of three sampling sd, at the largest width."""
    ratios = np.asarray(m["synthetic"][criterion][_top(m)]["cv_ratio_in"], dtype=float)
    return Measured(float((np.mean(ratios) - 1.0) / _band(m)), details={"per_seed": ratios.tolist()})


def flatness(m: Metrics, criterion: str) -> float:
    z = np.asarray(m["synthetic"][criterion][_top(m)]["flatness_z"], dtype=float)
    s = m["settings"]
    return float(np.max(z) / bonferroni_z(s["blocks"] ** 2 * len(s["seeds"])))


def informative(m: Metrics, criterion: str) -> Measured:
    frac = float(np.mean(m["synthetic"][criterion][_top(m)]["informative_fraction"]))
    uniform = m["synthetic"]["k_over_d"]
    return Measured(
        float(frac / uniform / m["settings"]["informative_factor"]), details={"fraction": frac, "uniform": uniform}
    )


def zero_pixels(m: Metrics, criterion: str) -> float:
    dig = m["digits"][criterion]
    widths = [str(w) for w in m["settings"]["widths"]]
    scores = np.asarray([v for w in widths for v in dig[w]["zero_input_max_abs_score"]], dtype=float)
    kept = np.asarray([v for w in widths for v in dig[w]["zero_input_kept_edges"]], dtype=float)
    return float(np.max(scores) + np.sum(kept))


def alignment_gap(m: Metrics) -> Measured:
    """SNIP minus Random NTK-target alignment at the mask density, paired by seed; t interval over seeds."""
    density = m["settings"]["density"]
    records = m["train"]["records"]

    def per_seed(criterion: str) -> dict[int, float]:
        return {r["seed"]: r["alignment"] for r in records if r["criterion"] == criterion and r["density"] == density}

    snip, rand = per_seed("snip"), per_seed("random")
    seeds = sorted(snip)
    if sorted(rand) != seeds:
        raise ValueError(f"SNIP seeds {seeds} and Random seeds {sorted(rand)} differ")
    return _relabel(seed_interval([snip[k] - rand[k] for k in seeds]), "t 95% over seeds (paired)")


def trained_skill(m: Metrics) -> Measured:
    """Test error of every trained pruned network (criterion x density x seed, and the dense ones) against
    the class prior's, run by run."""
    records = m["train"]["records"]
    errors = np.array([1.0 - r["test_accuracy"] for r in records], dtype=float)
    prior = np.full(errors.shape, 1.0 - float(m["train"]["prior_accuracy"]))
    return skill_over_trivial(errors, prior)


CLAIMS = [
    # The networks the train stage fits feed the alignment figure only (every paper claim is about masks and
    # NTKs at initialisation), but that they learned is still checked.
    learning_check(
        "learn_masked_networks",
        "every pruned network after its short training run (each criterion, density and seed, and the dense one)",
        "the training class prior",
        trained_skill,
        error="test error per trained network",
    ),
    *[
        ClaimSpec(
            f"converges_{c}",
            "paper" if c in DATA_DRIVEN else "check",
            f"{c}: the degree-sorted hidden-layer graphon converges to the limit graphon the Factorised Saliency "
            "Model predicts, fitted out of sample to another seed's scores (another initialisation and scoring "
            "batch) (slope of log L2 distance vs log width < 0, whole t interval over seeds)"
            + (
                ""
                if c in DATA_DRIVEN
                else "; for i.i.d. keep-p masks the prediction is flat and the "
                "distance falls with the binomial noise by construction"
            ),
            Test("<", 0.0),
            lambda m, c=c: fsm_slope(m, c),
            rests_on=() if c in DATA_DRIVEN else None,
        )
        for c in ("random", "magnitude", "snip", "grasp")
    ],
    *[
        ClaimSpec(
            f"fsm_beats_constant_{c}",
            "paper",
            f"{c}: at the largest width the FSM graphon fitted to another seed's scores is closer to the degree-sorted "
            "mask than the constant graphon p is (ratio of L2 distances < 1, whole t interval over seeds)",
            Test("<", 1.0),
            lambda m, c=c: fsm_over_constant(m, c),
            rests_on=(),
        )
        for c in DATA_DRIVEN
    ],
    *[
        ClaimSpec(
            f"uniform_degrees_{c}",
            "check",
            f"{c}: hidden-node degree CV equals the binomial value sqrt((1-p)/(p m)) (|mean ratio - 1| in units of "
            "3 sampling sd <= 1, largest width); i.i.d. keep-p by construction",
            Test("<=", 1.0),
            lambda m, c=c: Measured(abs(cv_excess(m, c).value)),
        )
        for c in UNIFORM
    ],
    *[
        ClaimSpec(
            f"flat_graphon_{c}",
            "check",
            f"{c}: index-ordered block graphon flat at p (largest |block - p| in standard errors / Bonferroni bound "
            "over blocks x seeds <= 1); i.i.d. keep-p by construction",
            Test("<=", 1.0),
            lambda m, c=c: flatness(m, c),
        )
        for c in UNIFORM
    ],
    *[
        ClaimSpec(
            f"nonuniform_{c}",
            "paper",
            f"{c}: hidden-node degree CV exceeds the binomial value ((mean ratio - 1) in units of 3 sampling sd > 1, "
            "largest width): a non-constant graphon",
            Test(">", 1.0),
            lambda m, c=c: cv_excess(m, c),
            rests_on=(),
        )
        for c in DATA_DRIVEN
    ],
    *[
        ClaimSpec(
            f"informative_edges_{c}",
            "paper",
            f"{c}: first-layer edges concentrate on the 4 informative inputs (kept fraction / (k/d) / "
            "informative_factor > 1)",
            Test(">", 1.0),
            lambda m, c=c: informative(m, c),
            rests_on=(),
        )
        for c in DATA_DRIVEN
    ],
    *[
        ClaimSpec(
            f"zero_pixels_pruned_{c}_digits",
            "check",
            f"digits, {c}: inputs that are 0 on the whole scoring batch get saliency exactly 0 and keep no edge "
            "(max |score| + kept edges over widths and seeds = 0): their weight gradient is 0",
            Test("<=", 0.0),
            lambda m, c=c: zero_pixels(m, c),
        )
        for c in DATA_DRIVEN
    ],
    ClaimSpec(
        "ntk_alignment_snip_over_random",
        "paper",
        "NTK-target alignment at the mask density: SNIP - Random > 0 (paired by seed, whole t interval over the "
        "ntk seeds)",
        Test(">", 0.0),
        alignment_gap,
        # masks and NTKs at initialisation: no trained model is compared
        rests_on=(),
    ),
]
