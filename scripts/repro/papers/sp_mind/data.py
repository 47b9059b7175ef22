"""Stage: the CyCIF exemplar as canonical tables, and SP-Bench-mini with reference answers.

Outputs ``cells.parquet``, ``gates.parquet`` (marker, gate, scale), ``workflow.parquet`` (parent, phenotype,
marker, rule), ``tasks.json`` (task specs; ``expected`` from the reference solver: each task's reference plan
run with the correct settings; at full scale a task set file in the same layout, e.g. an SP-Bench export,
is read instead) and the manifest.
"""

from __future__ import annotations

from pathlib import Path

from repro.papers.sp_mind.bench import read_tasks, task_specs
from repro.papers.sp_mind.cells import FOLDER, GATES, H5AD, WORKFLOW, read_gates, read_h5ad, read_workflow
from repro.papers.sp_mind.skills import SKILLS, Data
from repro.workflow.io import atomic_path, write_json
from repro.workflow.manifest import file_record, write_manifest


def reference_answers(data: Data, specs: list[dict]) -> list[dict]:
    return [s | {"expected": SKILLS[s["reference"]["skill"]].run(data, **s["reference"]["params"])} for s in specs]


def main(job) -> None:
    cfg = job.params.settings
    root = Path(job.input.package) / FOLDER
    cells, gates, workflow = read_h5ad(root / H5AD), read_gates(root / GATES), read_workflow(root / WORKFLOW)
    if cfg["bench"].get("tasks_file"):
        specs = read_tasks(cfg["bench"]["tasks_file"])
    else:
        specs = reference_answers(
            Data(cells, gates, workflow), task_specs(cfg["bench"]["seed"], cfg["bench"]["permutations"])
        )
    for frame, out in ((cells, job.output.cells), (gates, job.output.gates), (workflow, job.output.workflow)):
        with atomic_path(out) as tmp:
            frame.to_parquet(tmp, index=False)
    write_json(job.output.tasks, specs)
    folder = Path(job.output.manifest).parent
    write_manifest(
        job.output.manifest,
        source="scimap==2.3.6 wheel: MCMICRO CyCIF exemplar-001 (scimapExampleData.h5ad, manual gates, workflow)",
        producer="repro.papers.sp_mind.data",
        files=[
            file_record(p, folder) for p in (job.output.cells, job.output.gates, job.output.workflow, job.output.tasks)
        ],
        licence="scimap MIT; MCMICRO exemplar data (Harvard LSP)",
        settings=cfg["bench"],
        details={"cells": len(cells), "markers": len(gates), "tasks": len(specs), "gate_scale": "log1p"},
    )
