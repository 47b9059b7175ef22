"""Reproduce ICML 2026 ML-for-science papers: `snakemake --cores all` runs every enabled paper."""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "scripts"))

from repro.workflow.config import (
    check_config_files,
    enabled_papers,
    papers_of_cluster_job,
    validate_config,
)
from repro.workflow.errors import run_error_summary
from repro.workflow.scheduler_exit import cancel_scheduler_timers


configfile: "config/config.yaml"


# Snakemake's YAML loader keeps the last of two equal keys silently: read every config file of the
# run (the default above and each --configfile, which Snakemake deep-merges over it) strictly, and
# validate the merged config. A cluster job's snakemake (--mode remote) parses this file again with the
# same config files and --config values, which the submitting process has checked: it skips both.
if not workflow.remote_exec:
    check_config_files(workflow.configfiles)
    validate_config(
        config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"
    )

PAPERS = enabled_papers(config)
# A cluster job's Snakemake parses only the rule files of the papers whose rules it runs.
PARSED_PAPERS = (
    papers_of_cluster_job(PAPERS, sys.argv) if workflow.remote_exec else PAPERS
)

# Every job's interpreter hashes strings with the same seed, so iterating a set of names follows one
# order in every run (jobs inherit the environment; a cluster job re-reads this file).
os.environ.setdefault("PYTHONHASHSEED", "0")
# A stage stopped by bad input prints one block (file, problem, what to do) and no traceback, unless
# the run is --verbose; the blocks are printed again at the end of a failed run (onerror below).
os.environ.update({"REPRO_VERBOSE": "1" if workflow.output_settings.verbose else ""})
RUN_STARTED = time.time()


# The report's landing page is the scoreboard the `scoreboard` rule writes (read when the report is
# made, so `--report-after-run` shows the run's own scoreboard); run the workflow before `--report`.
report: str(Path("results/scoreboard.rst").resolve())


include: "workflow/rules/common.smk"
include: "workflow/rules/scoreboard.smk"
include: "workflow/rules/fixtures.smk"


for source in config["data"]:

    include: f"workflow/rules/{source}.smk"


for _paper in PARSED_PAPERS:

    include: f"workflow/rules/{_paper}.smk"


include: "workflow/rules/stages.smk"


rule all:
    default_target: True
    input:
        "results/scoreboard.csv",
        "results/index.html",
        [getattr(rules, rule_name(p)).input for p in PARSED_PAPERS],


# The scheduler has returned when these run: its pending rate-limit timers would only hold the exit for up to
# the profile's timespan (repro.workflow.scheduler_exit).
onsuccess:
    cancel_scheduler_timers()


onerror:
    cancel_scheduler_timers()
    summary = run_error_summary(RUN_STARTED)
    if summary:
        print(summary, file=sys.stderr)
