"""ACS-style literature peak lists: parsing (NMRexp ``nmr_shift`` text) and rendering (synthetic default).

¹H text such as ``δ 7.30–7.26 (m, 2H), 3.81 (s, 3H)`` becomes a multiset: each peak's value is the
midpoint of its range, repeated by its integration nH (brief §4). ¹³C text ``δ 170.1, 128.5`` gives
one value per peak. The text must parse completely (no residue), be monotone, stay in range and,
for ¹H, ranges must be narrower than ``h_gap``; failures raise :class:`Rejected` with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from repro.data.spectra.molecules import Rejected

RANGES = {"1H": (-1.0, 15.0), "13C": (-50.0, 250.0)}
NUCLEUS_OF_TYPE = {"1H NMR": "1H", "13C NMR": "13C"}

_NUMBER = r"[-−]?\d+(?:\.\d+)?"
_H_PEAK = re.compile(rf"^({_NUMBER})(?:\s*[–—\-−]\s*({_NUMBER}))?\s*\(([^()]*)\)$")
_C_PEAK = re.compile(rf"^({_NUMBER})(?:\s*\([^()]*\))?$")
_INTEGRATION = re.compile(r"(?:^|[\s,])(\d+)\s*H\b")
_PREFIX = re.compile(r"^.*?δ\s*(?:\(ppm\)\s*)?[:=]?\s*", re.DOTALL)


def _number(text: str) -> float:
    return float(text.replace("−", "-"))


def _split_peaks(text: str) -> list[str]:
    """Split at commas outside parentheses; unbalanced parentheses mean the text is not a peak list."""
    parts, depth, current = [], 0, []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise Rejected("unparsable_text", "unbalanced parentheses")
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    if depth != 0:
        raise Rejected("unparsable_text", "unbalanced parentheses")
    parts.append("".join(current).strip())
    return parts


def _body(text: str) -> str:
    """Drop the header up to 'δ' and a final full stop; what is left must be the peak list."""
    if not isinstance(text, str) or not text.strip():
        raise Rejected("unparsable_text", "empty text")
    body = _PREFIX.sub("", text.strip(), count=1) if "δ" in text else text.strip()
    return body.rstrip(". ;")


def _check_order_and_range(values: list[float], nucleus: str) -> None:
    diffs = np.diff(values)
    if not (np.all(diffs <= 0) or np.all(diffs >= 0)):
        raise Rejected("not_monotone", "peaks neither descending nor ascending")
    low, high = RANGES[nucleus]
    if any(not (low < v < high) for v in values):
        raise Rejected("out_of_range", f"shift outside ({low:g}, {high:g}) ppm")


@dataclass(frozen=True)
class ProtonPeak:
    """One ¹H peak: range ends, multiplicity text and integration."""

    high: float
    low: float
    n_h: int
    detail: str


def parse_proton_text(text: str, h_gap: float = 0.2) -> np.ndarray:
    """Multiset (sorted ascending) of ¹H shifts: each peak's midpoint repeated nH times."""
    peaks = []
    for part in _split_peaks(_body(text)):
        match = _H_PEAK.match(part)
        if not match:
            raise Rejected("unparsable_text", f"peak {part[:40]!r}")
        first = _number(match.group(1))
        second = _number(match.group(2)) if match.group(2) else first
        integration = _INTEGRATION.search(match.group(3))
        if not integration:
            raise Rejected("unparsable_text", f"no integration in {part[:40]!r}")
        peaks.append(ProtonPeak(max(first, second), min(first, second), int(integration.group(1)), match.group(3)))
    midpoints = [round((p.high + p.low) / 2, 4) for p in peaks]
    _check_order_and_range(midpoints, "1H")
    if any(p.high - p.low > h_gap + 1e-9 for p in peaks):
        raise Rejected("broad_range", f"a peak range exceeds h_gap={h_gap:g} ppm")
    values = np.concatenate([np.full(p.n_h, mid) for p, mid in zip(peaks, midpoints)])
    return np.sort(values)


def parse_carbon_text(text: str) -> np.ndarray:
    """Sorted ¹³C peak values (one per symmetry class in a correct report)."""
    values = []
    for part in _split_peaks(_body(text)):
        match = _C_PEAK.match(part)
        if not match:
            raise Rejected("unparsable_text", f"peak {part[:40]!r}")
        values.append(_number(match.group(1)))
    _check_order_and_range(values, "13C")
    return np.sort(np.asarray(values, float))


def parse_text(text: str, nucleus: str, h_gap: float = 0.2) -> np.ndarray:
    """Dispatch on the nucleus ('1H' or '13C')."""
    return parse_proton_text(text, h_gap) if nucleus == "1H" else parse_carbon_text(text)


def multiplicity(n_neighbour_h: int) -> str:
    """First-order multiplicity label (n + 1 rule), 'm' beyond a quartet."""
    return {0: "s", 1: "d", 2: "t", 3: "q"}.get(n_neighbour_h, "m")


def render_proton_text(peaks: list[tuple[float, int, str]], as_range: list[bool] | None = None) -> str:
    """ACS text of ¹H peaks ``(shift, nH, multiplicity)``, descending; optional narrow ranges around the value."""
    order = sorted(range(len(peaks)), key=lambda i: -peaks[i][0])
    items = []
    for i in order:
        shift, n_h, mult = peaks[i]
        coupling = "" if mult in ("s", "m") else ", J = 7.2 Hz"
        where = f"{shift + 0.02:.2f}–{shift - 0.02:.2f}" if as_range and as_range[i] else f"{shift:.2f}"
        items.append(f"{where} ({mult}{coupling}, {n_h}H)")
    return "δ " + ", ".join(items)


def render_carbon_text(values: list[float]) -> str:
    """ACS text of ¹³C peaks, descending, one decimal."""
    return "δ " + ", ".join(f"{v:.1f}" for v in sorted(values, reverse=True))
