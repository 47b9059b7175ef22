"""The end of a failed run: the data errors its stages met, as the blocks a user reads first.

A stage stopped by bad input (``repro.workflow.io.InputError``) leaves its block (file, problem, what to
do, rule, log) in ``.snakemake/repro-errors/`` (repro.workflow.entry); the Snakefile's ``onerror`` handler
prints the blocks written since the run started, after Snakemake's own job report, so that they are the
last thing on the screen instead of a traceback inside a hundred lines of scheduler output.
"""

from __future__ import annotations

from pathlib import Path

from repro.workflow.entry import ERRORS_DIR


def run_error_summary(started: float, folder: Path = ERRORS_DIR) -> str:
    """The blocks written at or after ``started`` (seconds since the epoch), under one heading; '' if none."""
    if not folder.is_dir():
        return ""
    blocks = [p.read_text().rstrip() for p in sorted(folder.glob("*.txt")) if p.stat().st_mtime >= started]
    if not blocks:
        return ""
    rule = "=" * 78
    return "\n".join(
        [rule, f"The run stopped on bad input ({len(blocks)} data error(s)); read this first:", rule, *blocks, rule]
    )
