"""DAG construction time: ``snakemake -n --configfile config/full.yaml`` with the papers that exist, and with 35.

The 35-paper count is synthetic: a scratch copy of the workflow where TALDA is declared 35 times through
``declare_paper`` (slugs talda01..talda35, each with its own package copy, schema, reported numbers and
captions) and every other paper is disabled, so the DAG has the shape a 35-paper default will have.
Each measurement is the best of ``--repeat`` runs in a fresh process (wall and CPU seconds: on a loaded machine
the CPU seconds are what an idle one would take); the job count comes from the dry run.

    python benchmarks/workflow_timing.py [--copies 35] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from workflow_tools import copy_workflow, snakemake  # noqa: E402

LIMIT_S = 5.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def dry_run(work: Path, repeat: int) -> tuple[float, float, int]:
    """Best wall and CPU seconds of ``snakemake -n --configfile config/full.yaml``, and the jobs it plans.

    CPU seconds (user + system) are what the dry run costs on an idle machine, whatever the load now.
    """
    best, best_cpu, jobs = float("inf"), float("inf"), 0
    for _ in range(repeat):
        start, cpu = time.perf_counter(), _children_cpu()
        out = snakemake(work, "-n", "--configfile", "config/full.yaml", "--quiet", "rules").stdout
        best, best_cpu = min(best, time.perf_counter() - start), min(best_cpu, _children_cpu() - cpu)
        match = re.search(r"^total\s+(\d+)$", out, re.MULTILINE)
        jobs = int(match.group(1)) if match else 0
    return best, best_cpu, jobs


def synthesise(work: Path, copies: int) -> None:
    """Declare TALDA ``copies`` times in ``work`` (a scratch copy) and disable every other paper."""
    schema_path = work / "workflow/schemas/config.schema.yaml"
    schema = yaml.safe_load(schema_path.read_text())
    rules = (work / "workflow/rules/talda.smk").read_text()
    configs = {name: yaml.safe_load((work / f"config/{name}.yaml").read_text()) for name in ("config", "full")}
    for config in configs.values():
        for section in config["papers"].values():
            section["enabled"] = False
    for i in range(1, copies + 1):
        slug = f"talda{i:02d}"
        (work / f"workflow/rules/{slug}.smk").write_text(rules.replace("talda", slug).replace("TALDA", slug.upper()))
        shutil.copytree(work / "scripts/repro/papers/talda", work / f"scripts/repro/papers/{slug}")
        shutil.copytree(work / "resources/talda", work / f"resources/{slug}")
        shutil.copytree(work / "workflow/report/talda", work / f"workflow/report/{slug}")
        shutil.copy(
            work / "workflow/schemas/papers/talda.schema.yaml", work / f"workflow/schemas/papers/{slug}.schema.yaml"
        )
        schema["properties"]["papers"]["properties"][slug] = {"$ref": f"papers/{slug}.schema.yaml"}
        for config in configs.values():
            config["papers"][slug] = dict(config["papers"]["talda"], enabled=True)
    for name, config in configs.items():
        (work / f"config/{name}.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    schema_path.write_text(yaml.safe_dump(schema, sort_keys=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=35)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import snakemake

    print(f"snakemake {snakemake.__version__}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        existing = copy_workflow(Path(tmp) / "existing")
        papers = [s for s, c in yaml.safe_load((existing / "config/config.yaml").read_text())["papers"].items()]
        try:
            seconds, cpu, jobs = dry_run(existing, args.repeat)
            print(
                f"existing papers ({len(papers)} configured): {seconds:.2f} s wall, {cpu:.2f} s CPU, "
                f"{jobs} jobs (limit {LIMIT_S} s)"
            )
        except AssertionError as err:
            print(f"existing papers: the dry run fails ({str(err).splitlines()[0]}); see the synthetic count")
        synthetic = copy_workflow(Path(tmp) / "synthetic")
        synthesise(synthetic, args.copies)
        seconds, cpu, jobs = dry_run(synthetic, args.repeat)
        print(
            f"synthetic {args.copies} papers (TALDA copies): {seconds:.2f} s wall, {cpu:.2f} s CPU, "
            f"{jobs} jobs (limit {LIMIT_S} s)"
        )
        print(f"load after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
