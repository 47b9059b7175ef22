"""A finished run exits at once, although the workflow profile's rate limit has a one-minute timespan
(repro.workflow.scheduler_exit; before it, every snakemake run of this workflow waited up to 60 s after its
last job)."""

from __future__ import annotations

import inspect
import threading
import time
from pathlib import Path

import yaml
from workflow_tools import copy_workflow, snakemake

from repro.workflow.scheduler_exit import REEVALUATION, cancel_scheduler_timers

REPO = Path(__file__).resolve().parents[1]


def test_snakemake_still_starts_its_timers_where_the_cancel_looks():
    """The scheduler method the cancel matches by name exists and starts a threading.Timer: a Snakemake that
    renamed it would bring back the wait at exit without this test failing otherwise."""
    from snakemake.scheduling.job_scheduler import JobScheduler

    assert "threading.Timer(" in inspect.getsource(getattr(JobScheduler, REEVALUATION))


def test_only_the_schedulers_timers_are_cancelled():
    """A timer started from a method of that name ends when cancelled; any other timer is left running."""

    class Scheduler:
        def _schedule_reevalutation(self) -> threading.Timer:
            timer = threading.Timer(60, lambda: None)
            timer.start()
            return timer

    ours, other = Scheduler()._schedule_reevalutation(), threading.Timer(60, lambda: None)
    other.start()
    try:
        assert cancel_scheduler_timers() == 1
        ours.join(timeout=5)
        assert not ours.is_alive() and other.is_alive()
    finally:
        other.cancel()
        ours.cancel()


def test_a_run_of_one_job_exits_long_before_the_rate_limits_timespan(tmp_path):
    """One quick job (a fixture writer) through the real Snakefile and workflow profile: the process is done
    in well under the profile's timespan, which it waited out before (61.9 s for a 2 s job with --no-hooks,
    which skips the Snakefile's cancel, against 2.7 s with it)."""
    profile = yaml.safe_load((REPO / "profiles/default/config.yaml").read_text())
    timespan_s = int(profile["max-jobs-per-timespan"].split("/")[1].removesuffix("s"))
    work = copy_workflow(tmp_path / "wf")
    start = time.perf_counter()
    snakemake(work, "--cores", "1", "data/fixtures/verde", timeout=600)
    assert time.perf_counter() - start < timespan_s / 2
    assert (work / "data/fixtures/verde/n256_logq20_binary/train.prefix").is_file()
