"""Let a finished run exit at once: cancel the scheduler's pending re-evaluation timers.

Why: with a rate limit (``max-jobs-per-timespan``; profiles/default sets 1000/60s to keep the engine off a
one-second loop), Snakemake's ``JobScheduler`` ends every scheduling pass by starting a ``threading.Timer`` of
the limit's timespan that wakes it for another pass. Those timers are non-daemon threads, so after the last job
the process still waits for the newest of them: up to 60 s after "Complete log", for every run, local or
submitting to a cluster (measured here: a run of one 2 s job took 62.6 s of wall, 3.0 s with a one-second
timespan). The Snakefile's ``onsuccess``/``onerror`` hooks run after the scheduler has returned, when no pass
can follow, so cancelling the timers there changes nothing but when the process exits.
"""

from __future__ import annotations

import threading

# JobScheduler's method that starts the timers (its spelling, Snakemake 9); tests/test_scheduler_exit.py fails
# when a Snakemake upgrade renames it
REEVALUATION = "_schedule_reevalutation"


def cancel_scheduler_timers() -> int:
    """Cancel the pending re-evaluation timers of Snakemake's scheduler; return how many there were."""
    timers = [
        t
        for t in threading.enumerate()
        if isinstance(t, threading.Timer) and REEVALUATION in getattr(t.function, "__qualname__", "")
    ]
    for timer in timers:
        timer.cancel()
    return len(timers)
