"""Claims: what a paper says, what we measured, and a verdict computed from a test.

A verdict is never written by hand: each claim carries a machine-checkable test
(a comparison against a threshold or a reference number with a tolerance) and the
verdict is computed from our measured number. A measurement that is missing or NaN
fails, so a broken run can never pass a claim.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field
from typing import Any

from repro.io import write_json

SCALES = ("smoke", "full")
COMPARISONS = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


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
        else:
            raise ValueError(f"unknown test op {self.op!r}")

    def passes(self, ours: float | None) -> bool:
        if ours is None or not math.isfinite(float(ours)):
            return False
        ours = float(ours)
        if self.op in COMPARISONS:
            return bool(COMPARISONS[self.op](ours, self.value))
        if self.op == "within":
            return abs(ours - self.value) <= max(self.abs_tol, self.rel_tol * abs(self.value))
        return self.low <= ours <= self.high

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


@dataclass
class Claim:
    """One checked claim of a paper."""

    id: str
    statement: str
    scale: str
    ours: float | None
    test: Test
    paper_value: float | str | None = None
    paper_source: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.scale not in SCALES:
            raise ValueError(f"claim {self.id}: scale must be one of {SCALES}, got {self.scale!r}")

    @property
    def verdict(self) -> str:
        return "pass" if self.test.passes(self.ours) else "fails"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        ours = self.ours
        out["ours"] = None if ours is None or not math.isfinite(float(ours)) else float(ours)
        out["test"] = {k: v for k, v in asdict(self.test).items() if v not in (None, 0.0)}
        out["test_text"] = self.test.describe()
        out["verdict"] = self.verdict
        return out


def write_claims(path: str | os.PathLike, paper: str, claims: list[Claim]) -> None:
    """Write ``claims.json`` for ``paper`` atomically; claim ids must be unique."""
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{paper}: duplicate claim ids in {ids}")
    write_json(path, {"paper": paper, "claims": [c.to_dict() for c in claims]})
