"""What a reader refused: rows, records, spectra or frames counted, named and bounded.

Every reader of a user's file that drops part of it keeps one :class:`Refusals`: each refused item is
recorded with its id (the dataset's own id where it has one, else ``line N`` / ``record N``) and the
reason. :meth:`Refusals.close` logs how many were refused and the first ten ids, and raises an
:class:`~repro.workflow.io.InputError` naming the file when more than the configured fraction was
refused; :meth:`Refusals.summary` is what the source's manifest records. Nothing is dropped silently.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from typing import Any

from repro.workflow.io import InputError

log = logging.getLogger(__name__)
SHOWN = 10


class Refusals:
    """Refused items of one input file (``what``: "rows", "records", "spectra", ...)."""

    def __init__(self, path: str | os.PathLike, what: str = "rows"):
        self.path, self.what = str(path), what
        self.total = 0
        self.ids: list[str] = []
        self.reasons: Counter[str] = Counter()
        self.examples: dict[str, str] = {}

    def seen(self, n: int = 1) -> None:
        """Count ``n`` items read (accepted or refused)."""
        self.total += n

    def refuse(self, ident: Any, reason: str) -> None:
        """Record one refused item (already counted by :meth:`seen`)."""
        self.ids.append(str(ident))
        self.reasons[reason] += 1
        self.examples.setdefault(reason, str(ident))

    @property
    def count(self) -> int:
        return len(self.ids)

    def summary(self) -> dict[str, Any]:
        """What the manifest records: totals, the first ten ids and the count per reason."""
        return {
            "read": self.total,
            "refused": self.count,
            "refused_fraction": self.count / self.total if self.total else 0.0,
            "first_refused": self.ids[:SHOWN],
            "reasons": dict(sorted(self.reasons.items())),
        }

    def describe(self) -> str:
        reasons = "; ".join(
            f"{n} {reason} (e.g. {self.examples[reason]})" for reason, n in sorted(self.reasons.items())
        )
        return f"{self.count} of {self.total} {self.what} refused: {reasons}; first ids {self.ids[:SHOWN]}"

    def close(self, max_fraction: float) -> dict[str, Any]:
        """Log the refusals, fail above ``max_fraction`` of the items (or when nothing is left); the summary."""
        if self.total == 0:
            raise InputError(self.path, f"no {self.what} to read")
        if self.count == self.total:
            raise InputError(self.path, f"every one of the {self.total} {self.what} refused: {self.describe()}")
        if self.count / self.total > max_fraction:
            raise InputError(self.path, f"{self.describe()}; more than the allowed fraction {max_fraction:g}")
        if self.count:
            log.warning("%s: %s", self.path, self.describe())
        else:
            log.info("%s: all %d %s read", self.path, self.total, self.what)
        return self.summary()
