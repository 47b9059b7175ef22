"""Progress a user can follow in a rule's log: a line at least once a minute and at each epoch or step.

tqdm's bar is kept for a terminal (``disable=None`` turns it off elsewhere), so the log of a cluster
job would otherwise stay silent until the step ends; :class:`Progress` writes plain log lines with
throughput, elapsed time and ETA whatever the output is.
"""

from __future__ import annotations

import logging
import time

log = logging.getLogger("repro.workflow.progress")


def _clock(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    return f"{seconds // 3600:d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class Progress:
    """Counts work units of a long step and logs ``desc: done/total, rate, elapsed, ETA`` lines.

    A line is written when ``update(..., force=True)`` is called (each epoch) and otherwise at most
    every ``every`` seconds, so a log shows life at least once a minute without flooding.
    """

    def __init__(
        self,
        desc: str,
        total: int | None = None,
        unit: str = "it",
        every: float = 60.0,
        logger: logging.Logger = log,
        initial: int = 0,
    ) -> None:
        """``initial`` counts units done before this process (a resumed run): shown in ``done/total``
        but left out of the rate and the ETA, which measure this process only."""
        self.desc, self.total, self.unit, self.every, self.log = desc, total, unit, every, logger
        self.start = self.last = time.perf_counter()
        self.done = self.initial = initial

    def rate(self, now: float | None = None) -> float:
        """Units per second done by this process."""
        elapsed = (time.perf_counter() if now is None else now) - self.start
        return (self.done - self.initial) / elapsed if elapsed > 0 else float("nan")

    def update(self, n: int = 1, *, force: bool = False, **fields: float | str) -> None:
        self.done += n
        now = time.perf_counter()
        if force or now - self.last >= self.every or (self.total is not None and self.done >= self.total):
            self.last = now
            self.log.info("%s", self.line(now, **fields))

    def line(self, now: float | None = None, **fields: float | str) -> str:
        now = time.perf_counter() if now is None else now
        elapsed = now - self.start
        rate = self.rate(now)
        parts = [f"{self.desc}: {self.done}" + (f"/{self.total}" if self.total is not None else "") + f" {self.unit}"]
        parts += [f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in fields.items()]
        parts.append(f"{rate:.3g} {self.unit}/s")
        parts.append(f"elapsed {_clock(elapsed)}")
        if self.total is not None and rate > 0:
            parts.append(f"ETA {_clock((self.total - self.done) / rate)}")
        return ", ".join(parts)
