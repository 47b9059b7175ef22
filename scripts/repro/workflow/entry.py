"""The one entry point every rule's ``script:`` goes through.

``workflow/scripts/entry.py`` calls :func:`run` with the ``snakemake`` object; the rule's
``params.entry`` names the module whose ``main(job)`` does the work. Stage modules thus
take a plain :class:`Job` and can be called from tests without Snakemake.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import re
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Where a stage that stops on bad input leaves its error block; the Snakefile's onerror handler prints the
# blocks of the run last, so the file and the problem are what a user reads first (repro.workflow.errors).
ERRORS_DIR = Path(".snakemake/repro-errors")
# The last line a stage's log gets (see run); benchmarks/default_run.py and repro.reporting.docs read it back.
USAGE_LINE = re.compile(r"done in ([\d.]+) s \(process: ([\d.]+) CPU-s, peak ([\d.]+) MB\)")
# What the process had used when ``main`` began (interpreter, imports, config): the fixed part of a stage's cost
# that benchmarks/full_scale_cost.py takes as measured instead of fitting it.
STARTUP_LINE = re.compile(r"MB\) after start-up ([\d.]+) CPU-s, peak ([\d.]+) MB")


@dataclass
class Job:
    """What a stage gets: named inputs/outputs/params (attribute access), threads, its log.

    There is deliberately no access to the whole config: a stage sees only its params (its own config
    keys, the scale, the seed where it uses one), so every setting it depends on is a tracked rule param.
    """

    input: Any
    output: Any
    params: Any
    wildcards: Any = None
    threads: int = 1
    log: Path | None = None


THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def compute_threads(smk: Any) -> int:
    """The threads a stage computes with: the count its config declares (``params.compute_threads``), not
    the count Snakemake grants, which ``--cores`` caps. Why: a parallel reduction in torch or BLAS sums in
    an order that depends on its thread count, so two runs at different ``--cores`` would differ."""
    declared = getattr(smk.params, "compute_threads", None)
    return max(1, int(declared if declared is not None else smk.threads))


def limit_threads_before_import(threads: int) -> None:
    """Set the OpenMP/BLAS thread variables before the stage's module (or a function inside it) imports
    numpy or torch, so libraries loaded later start with ``threads`` threads too."""
    for name in THREAD_VARIABLES:
        os.environ[name] = str(threads)


def configure_threads(threads: int) -> None:
    """Bound torch's and the BLAS libraries' CPU threads to ``threads`` (libraries already loaded).

    torch only when the stage's module already imported it: a numpy stage never pays torch's import.
    """
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)


def run(smk: Any) -> None:
    """Run ``smk.params.entry``'s ``main`` with stdout, stderr and logging sent to the rule's log."""
    log_path = Path(smk.log[0]) if len(smk.log) else None
    stream = open(log_path, "a", buffering=1) if log_path else sys.stderr
    with (
        stream if log_path else contextlib.nullcontext(),
        contextlib.redirect_stdout(stream),
        contextlib.redirect_stderr(stream),
    ):
        logging.basicConfig(
            stream=stream, level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s", force=True
        )
        threads = compute_threads(smk)
        limit_threads_before_import(threads)
        from repro.workflow.io import InputError  # after the thread variables: it imports numpy

        module = importlib.import_module(smk.params.entry)
        configure_threads(threads)
        job = Job(smk.input, smk.output, smk.params, smk.wildcards, threads, log_path)
        log = logging.getLogger("repro.workflow.entry")
        start = time.perf_counter()
        startup_cpu, startup_mb = process_usage()
        log.info("running %s", smk.params.entry)
        try:
            module.main(job)
        except InputError as err:
            log.error("%s failed on bad input: %s", smk.params.entry, err, exc_info=True)
            report_input_error(err, smk.rule, log_path)
            if os.environ.get("REPRO_VERBOSE"):
                raise
            raise SystemExit(1) from None
        except Exception as err:
            log.error("%s failed: %s", smk.params.entry, err, exc_info=True)
            raise
        cpu, peak_mb = process_usage()
        log.info(
            "%s done in %.1f s (process: %.2f CPU-s, peak %.0f MB) after start-up %.2f CPU-s, peak %.0f MB",
            smk.params.entry,
            time.perf_counter() - start,
            cpu,
            peak_mb,
            startup_cpu,
            startup_mb,
        )


def report_input_error(err: Any, rule: str, log_path: Path | None) -> None:
    """Print the error block on the job's real stderr (no traceback: that is in the log) and leave it for
    the run's end-of-run summary."""
    block = err.block() + (f"\n  rule: {rule}, full log: {log_path}" if log_path else f"\n  rule: {rule}")
    print(block, file=sys.__stderr__, flush=True)
    ERRORS_DIR.mkdir(parents=True, exist_ok=True)
    (ERRORS_DIR / f"{time.time_ns()}-{os.getpid()}.txt").write_text(block + "\n")


def process_usage() -> tuple[float, float]:
    """CPU seconds (user + system) and peak resident MB of this process over its life, waited-for children included.

    Why our own figure: Snakemake's ``benchmark:`` samples CPU time every 0.5 s for 15 s, then every 30 s,
    and keeps the last sample, so a job of 20 to 45 s loses most of its CPU time there.
    """
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    return cpu, max(own.ru_maxrss, children.ru_maxrss) / 1024


def logged_usage(log: Path) -> tuple[float, float] | None:
    """(CPU seconds, peak MB) a stage's log reports for its process, None if the log or the line is missing."""
    if not log.is_file():
        return None
    found = USAGE_LINE.findall(log.read_text(errors="replace"))
    return (float(found[-1][1]), float(found[-1][2])) if found else None


def logged_startup(log: Path) -> tuple[float, float] | None:
    """(CPU seconds, peak MB) the stage's process had used when its ``main`` began, None where the log has
    no start-up figure (a log written before it was recorded)."""
    if not log.is_file():
        return None
    found = STARTUP_LINE.findall(log.read_text(errors="replace"))
    return (float(found[-1][0]), float(found[-1][1])) if found else None
