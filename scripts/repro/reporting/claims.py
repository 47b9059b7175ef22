"""Claims: what a paper says, what we measured, and a verdict computed from a test.

Two kinds (DESIGN.md, "Claims: two kinds"): a ``paper`` claim is the paper's assertion about its method
measured on this run's outputs and must be able to fail; a ``check`` is an identity or implementation
property (anything that holds by construction). The scoreboard counts them apart.

A paper declares its claims once, as :class:`ClaimSpec` objects in ``repro.papers.<pkg>.claims``
(``CLAIMS``), each with a ``measure`` function that takes the stage outputs (the paper's metrics
mapping) and returns a number or a :class:`Measured`. :func:`evaluate_claims` runs every spec: an
input that is missing or not finite still yields a claim, with ``ours = None``, that fails. Because
``measure`` is a plain function of the outputs, a unit test can feed it a counterfactual (the
baseline's numbers in place of the method's) and show that the verdict is ``fails``.

Small effects carry an interval (over seeds or bootstrap resamples); a claim with an interval passes
only when the whole interval clears the test, not just the point estimate.

Three verdicts (DESIGN.md): ``pass``, ``fails`` and ``inconclusive``. A *learning check*
(``ClaimSpec(..., learning=True)``, a ``check``) says that a trained model beat a trivial predictor on
held-out data by a margin declared before the run (:func:`learning_check`, :func:`skill_over_trivial`).
A paper claim names the learning checks of the models it compares in ``rests_on``; when any of them does
not pass, the claim's verdict is ``inconclusive`` whatever its own test says, because a model that did not
train says nothing about the paper in either direction. A claim that times code says ``timing=True``:
it is the only kind allowed to differ between two runs of one commit.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from repro.workflow.io import write_json

SCALES = ("smoke", "full")
KINDS = ("paper", "check")
VERDICTS = ("pass", "fails", "inconclusive")
COMPARISONS = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}
# What a measure function may raise when an input is missing or malformed: the claim is then written
# with ours = None (and fails) instead of vanishing from claims.json.
MISSING_INPUT_ERRORS = (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError, FloatingPointError)


def finite_or_none(value: Any) -> float | None:
    """``float(value)`` when it is a finite number, else ``None`` (NaN, inf, None, non-numbers)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


@dataclass(frozen=True)
class Test:
    """A verdict rule. ``op`` is one of '<', '<=', '>', '>=', 'within', 'between'.

    - comparisons: ``ours <op> value``;
    - 'within': ``|ours - value| <= max(abs_tol, rel_tol * |value|)``;
    - 'between': ``low <= ours <= high``.
    """

    __test__ = False  # not a pytest test class

    op: str
    value: float | None = None
    abs_tol: float = 0.0
    rel_tol: float = 0.0
    low: float | None = None
    high: float | None = None

    def __post_init__(self) -> None:
        if self.op in COMPARISONS or self.op == "within":
            if self.value is None:
                raise ValueError(f"test {self.op!r} needs a value")
        elif self.op == "between":
            if self.low is None or self.high is None:
                raise ValueError("test 'between' needs low and high")
            if self.low > self.high:
                raise ValueError(f"test 'between' needs low <= high, got {self.low} > {self.high}")
        else:
            raise ValueError(f"unknown test op {self.op!r}")

    def _holds(self, x: float) -> bool:
        if self.op in COMPARISONS:
            return bool(COMPARISONS[self.op](x, self.value))
        if self.op == "within":
            return abs(x - self.value) <= max(self.abs_tol, self.rel_tol * abs(self.value))
        return self.low <= x <= self.high

    def passes(self, ours: float | None, interval: Interval | None = None) -> bool:
        """True when ``ours`` (and, if given, both ends of ``interval``) satisfy the test.

        With an interval the verdict is conservative: for '>'/'>=' its lower end must pass, for
        '<'/'<=' its upper end, for 'within'/'between' both ends.
        """
        ours = finite_or_none(ours)
        if ours is None or not self._holds(ours):
            return False
        if interval is None:
            return True
        low, high = finite_or_none(interval.low), finite_or_none(interval.high)
        if low is None or high is None:
            return False
        if self.op in (">", ">="):
            return self._holds(low)
        if self.op in ("<", "<="):
            return self._holds(high)
        return self._holds(low) and self._holds(high)

    def describe(self) -> str:
        if self.op in COMPARISONS:
            return f"ours {self.op} {self.value:g}"
        if self.op == "within":
            tol = []
            if self.abs_tol:
                tol.append(f"±{self.abs_tol:g}")
            if self.rel_tol:
                tol.append(f"±{100 * self.rel_tol:g}%")
            return f"|ours - {self.value:g}| <= " + (" or ".join(tol) or "0")
        return f"{self.low:g} <= ours <= {self.high:g}"


@dataclass(frozen=True)
class Interval:
    """An uncertainty interval for a measured number: its ends, how it was made and from how many draws."""

    low: float
    high: float
    method: str
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {"low": finite_or_none(self.low), "high": finite_or_none(self.high), "method": self.method, "n": self.n}


@dataclass
class Measured:
    """What a claim's ``measure`` returns when a bare number is not enough: an interval, details."""

    value: float | None
    interval: Interval | None = None
    details: dict[str, Any] = field(default_factory=dict)


def seed_interval(values: Sequence[float], level: float = 0.95) -> Measured:
    """Mean over seeds with a Student-t interval of the mean; any NaN (or fewer than 2 seeds) gives NaN."""
    from scipy import stats

    x = np.asarray(values, dtype=float)
    mean = float(np.mean(x)) if x.size else float("nan")
    if x.size < 2 or not np.all(np.isfinite(x)):
        return Measured(mean, Interval(float("nan"), float("nan"), f"t {level:.0%} over seeds", int(x.size)))
    half = float(stats.t.ppf(0.5 + level / 2, x.size - 1) * np.std(x, ddof=1) / math.sqrt(x.size))
    return Measured(
        mean, Interval(mean - half, mean + half, f"t {level:.0%} over seeds", int(x.size)), {"per_seed": x.tolist()}
    )


def bootstrap_interval(
    samples: Sequence[np.ndarray] | np.ndarray,
    statistic: Callable[..., float] = np.mean,
    *,
    n_resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
    paired: bool = False,
) -> Measured:
    """Statistic of ``samples`` (one array, or several for a multi-sample statistic) with a percentile
    bootstrap interval (scipy.stats.bootstrap). Any NaN in the data gives a NaN value and interval."""
    from scipy import stats

    data = (
        (np.asarray(samples, dtype=float),)
        if isinstance(samples, np.ndarray)
        else tuple(np.asarray(s, dtype=float) for s in samples)
    )
    value = float(statistic(*data))
    method = f"percentile bootstrap {level:.0%}"
    if not all(np.all(np.isfinite(d)) and d.size > 1 for d in data) or not math.isfinite(value):
        return Measured(value, Interval(float("nan"), float("nan"), method, n_resamples))
    res = stats.bootstrap(
        data,
        statistic,
        n_resamples=n_resamples,
        confidence_level=level,
        method="percentile",
        paired=paired,
        vectorized=False,
        random_state=np.random.default_rng(seed),
    )
    ci = res.confidence_interval
    return Measured(value, Interval(float(ci.low), float(ci.high), method, n_resamples))


def deviation_from_reported(
    key: str, ours: Callable[[Mapping[str, Any]], float], relative: bool = True
) -> Callable[[Mapping[str, Any]], Measured]:
    """A full-scale claim's ``measure``: |ours - paper|, divided by |paper| when ``relative``.

    The paper's number is read from ``outputs["reported"][key]``, which the evaluate stage copies from
    ``resources/<slug>/reported.yaml``, so the measure stays a pure function of the stage outputs.
    """

    def measure(outputs: Mapping[str, Any]) -> Measured:
        value, paper = float(ours(outputs)), float(outputs["reported"][key])
        gap = abs(value - paper) / (abs(paper) if relative else 1.0)
        return Measured(gap, details={"ours": value, "paper": paper, "relative": relative})

    return measure


def binomial_interval(successes: int, trials: int, level: float = 0.95) -> Measured:
    """Observed rate successes/trials with its Clopper-Pearson (exact binomial) interval."""
    from scipy import stats

    if trials < 1:
        return Measured(float("nan"), Interval(float("nan"), float("nan"), f"Clopper-Pearson {level:.0%}", 0))
    ci = stats.binomtest(int(successes), int(trials)).proportion_ci(level, method="exact")
    return Measured(
        successes / trials, Interval(float(ci.low), float(ci.high), f"Clopper-Pearson {level:.0%}", int(trials))
    )


@dataclass
class Claim:
    """One checked claim of a paper (what ``claims.json`` holds, one entry each)."""

    id: str
    statement: str
    scale: str
    ours: float | None
    test: Test
    paper_value: float | str | None = None
    paper_source: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    interval: Interval | None = None
    kind: str = field(kw_only=True)
    learning: bool = field(default=False, kw_only=True)
    timing: bool = field(default=False, kw_only=True)
    rests_on: tuple[str, ...] = field(default=(), kw_only=True)
    inconclusive_because: tuple[str, ...] = field(default=(), kw_only=True)

    def __post_init__(self) -> None:
        if self.scale not in SCALES:
            raise ValueError(f"claim {self.id}: scale must be one of {SCALES}, got {self.scale!r}")
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: kind must be one of {KINDS}, got {self.kind!r}")

    @property
    def verdict(self) -> str:
        """``inconclusive`` when a learning check this claim rests on did not pass, else its own test's."""
        if self.inconclusive_because:
            return "inconclusive"
        return "pass" if self.test.passes(self.ours, self.interval) else "fails"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["rests_on"] = list(self.rests_on)
        out["inconclusive_because"] = list(self.inconclusive_because)
        out["ours"] = finite_or_none(self.ours)
        out["test"] = {k: v for k, v in asdict(self.test).items() if v is not None}
        out["test_text"] = self.test.describe()
        out["interval"] = self.interval.to_dict() if self.interval else None
        out["verdict"] = self.verdict
        return out


@dataclass(frozen=True)
class ClaimSpec:
    """A claim as a paper module declares it: the verdict comes from ``measure(outputs)`` and ``test``.

    ``reported`` names the entry of ``resources/<slug>/reported.yaml`` that holds the paper's own
    statement or number; ``scales`` the scales at which the claim is checked.

    ``learning=True`` marks a check that a trained model learned (see :func:`learning_check`).
    ``rests_on`` (paper claims) names the learning checks of the trained models the claim compares; ``()``
    says it compares no trained model, ``None`` that it was not declared (a paper that trains models must
    declare it on every paper claim: tests/test_paper_conformance.py). ``timing=True`` marks a claim that
    times code (measured over repeats, with an interval).
    """

    id: str
    kind: str
    statement: str
    test: Test
    measure: Callable[[Mapping[str, Any]], float | Measured | None]
    reported: str | None = None
    scales: tuple[str, ...] = SCALES
    rests_on: tuple[str, ...] | None = None
    learning: bool = False
    timing: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: kind must be one of {KINDS}, got {self.kind!r}")
        if not set(self.scales) <= set(SCALES):
            raise ValueError(f"claim {self.id}: scales must be within {SCALES}, got {self.scales}")
        if self.learning and self.kind != "check":
            raise ValueError(f"claim {self.id}: a learning check has kind 'check', got {self.kind!r}")
        if self.rests_on is not None and self.kind != "paper":
            raise ValueError(f"claim {self.id}: only a paper claim rests on learning checks")
        if isinstance(self.rests_on, str):
            raise ValueError(f"claim {self.id}: rests_on is a tuple of claim ids, got the string {self.rests_on!r}")

    def evaluate(
        self, outputs: Mapping[str, Any], scale: str, reported: Mapping[str, Mapping[str, Any]] | None = None
    ) -> Claim:
        """The claim for this run: missing or non-finite inputs give ``ours = None`` (a failing claim)."""
        details: dict[str, Any] = {}
        interval = None
        try:
            result = self.measure(outputs)
        except MISSING_INPUT_ERRORS as err:
            result, details = None, {"error": f"input missing or malformed: {type(err).__name__}: {err}"}
        if isinstance(result, Measured):
            result, interval, details = result.value, result.interval, {**details, **result.details}
        paper_value, paper_source = None, None
        if self.reported is not None:
            if reported is None or self.reported not in reported:
                raise KeyError(f"claim {self.id}: no reported entry {self.reported!r}")
            paper_value, paper_source = reported[self.reported]["value"], reported[self.reported]["source"]
        return Claim(
            self.id,
            self.statement,
            scale,
            finite_or_none(result),
            self.test,
            paper_value,
            paper_source,
            details,
            interval,
            kind=self.kind,
            learning=self.learning,
            timing=self.timing,
            rests_on=tuple(self.rests_on or ()),
        )


def validate_specs(specs: Sequence[ClaimSpec]) -> None:
    """Ids are unique and every ``rests_on`` names a learning check of the same list, checked at every
    scale the claim is; raises ValueError naming the claim otherwise."""
    by_id: dict[str, ClaimSpec] = {}
    for spec in specs:
        if spec.id in by_id:
            raise ValueError(f"claim {spec.id}: declared twice")
        by_id[spec.id] = spec
    for spec in specs:
        for dep in spec.rests_on or ():
            check = by_id.get(dep)
            if check is None or not check.learning:
                raise ValueError(f"claim {spec.id}: rests_on {dep!r} is not a learning check of this paper")
            missing = set(spec.scales) - set(check.scales)
            if missing:
                raise ValueError(f"claim {spec.id}: learning check {dep!r} is not evaluated at {sorted(missing)}")


def evaluate_claims(
    specs: Sequence[ClaimSpec],
    outputs: Mapping[str, Any],
    scale: str,
    reported: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Claim]:
    """Every spec checked at ``scale`` becomes a claim; none is dropped for missing inputs. A paper claim
    whose learning checks did not all pass is marked inconclusive, naming them."""
    validate_specs(specs)
    claims = [spec.evaluate(outputs, scale, reported) for spec in specs if scale in spec.scales]
    learned = {c.id: c.verdict == "pass" for c in claims if c.learning}
    for claim in claims:
        claim.inconclusive_because = tuple(dep for dep in claim.rests_on if not learned[dep])
    return claims


def verdict(specs: Sequence[ClaimSpec], claim_id: str, outputs: Mapping[str, Any], scale: str = "smoke") -> str:
    """Verdict of one claim on ``outputs`` (its learning checks evaluated on the same outputs): what
    counterfactual tests call. A counterfactual of a paper claim that rests on learning checks must
    supply outputs in which those models learned, or the verdict is ``inconclusive``, not ``fails``."""
    if not any(s.id == claim_id for s in specs):
        raise KeyError(f"no claim {claim_id!r}; have {[s.id for s in specs]}")
    needed = {claim_id} | set(next(s for s in specs if s.id == claim_id).rests_on or ())
    chosen = [s for s in specs if s.id in needed and scale in s.scales]
    reported = _AnyReported() if any(s.reported is not None for s in chosen) else None
    return next(c for c in evaluate_claims(chosen, outputs, scale, reported) if c.id == claim_id).verdict


def skill_over_trivial(
    model_errors: Sequence[float] | np.ndarray,
    trivial_errors: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Measured:
    """Skill of a model over a trivial predictor on the same held-out items: ``1 - mean(model) /
    mean(trivial)`` of per-item errors (squared error, absolute error, 0/1 loss, negative log-likelihood:
    any loss where lower is better and the trivial predictor's mean is positive), with a paired
    percentile bootstrap interval over items. 0.2 means 20 % lower error than the trivial predictor."""
    model = np.asarray(model_errors, dtype=float).ravel()
    trivial = np.asarray(trivial_errors, dtype=float).ravel()
    if model.shape != trivial.shape:
        raise ValueError(f"model and trivial errors must be paired, got {model.shape} and {trivial.shape}")

    def skill(m: np.ndarray, t: np.ndarray) -> float:
        denominator = float(np.mean(t))
        return 1.0 - float(np.mean(m)) / denominator if denominator > 0 else float("nan")

    result = bootstrap_interval((model, trivial), skill, n_resamples=n_resamples, seed=seed, paired=True)
    result.details = {"model_error": float(np.mean(model)), "trivial_error": float(np.mean(trivial)), "n": model.size}
    return result


def skill_of(
    model: str, trivial: str = "trivial", section: str | tuple[str, ...] = "learning"
) -> Callable[[Mapping[str, Any]], Measured]:
    """The usual learning-check ``measure``: :func:`skill_over_trivial` of the per-item errors stored at
    ``outputs[section][model]`` against those at ``outputs[section][trivial]`` (``section`` a key or a path of
    keys into the metrics)."""
    path = (section,) if isinstance(section, str) else tuple(section)

    def measure(outputs: Mapping[str, Any]) -> Measured:
        errors = outputs
        for key in path:
            errors = errors[key]
        return skill_over_trivial(errors[model], errors[trivial])

    return measure


def learning_check(
    claim_id: str,
    model: str,
    trivial: str,
    measure: Callable[[Mapping[str, Any]], float | Measured | None],
    *,
    margin: float = 0.2,
    error: str = "error",
    scales: tuple[str, ...] = SCALES,
) -> ClaimSpec:
    """The learning check of one trained model, declared in claims.py before any run: on held-out data its
    ``error`` is at least ``margin`` (a fraction) below that of ``trivial`` (persistence, climatology, the
    class prior, the mean, the untrained initialisation, ...), the whole interval clearing the margin.
    ``measure`` returns the skill, usually :func:`skill_over_trivial` of per-item errors."""
    statement = (
        f"{model} learned: its held-out {error} is at least {margin:.0%} below {trivial}'s "
        f"(skill = 1 - model/trivial >= {margin:g})"
    )
    return ClaimSpec(claim_id, "check", statement, Test(">=", margin), measure, scales=scales, learning=True)


class _AnyReported(dict):
    """Stands in for a reported.yaml in counterfactual tests, where the paper's value does not matter."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> dict[str, Any]:
        return {"value": None, "source": None}


def write_claims(path: str | os.PathLike, paper: str, claims: list[Claim]) -> None:
    """Write ``claims.json`` for ``paper`` atomically; claim ids must be unique."""
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{paper}: duplicate claim ids in {ids}")
    write_json(path, {"paper": paper, "claims": [c.to_dict() for c in claims]})
