"""Stage: the CyCIF exemplar as canonical tables, and SP-Bench-mini with reference answers.

Outputs ``cells.parquet``, ``gates.parquet`` (marker, gate, scale), ``workflow.parquet`` (parent, phenotype,
marker, rule), ``tasks.json`` (task specs with ``expected``, from the reference solver: each task's reference
call run by the skills with the correct settings; or a task-set file in the same layout, read instead) and
the manifest.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.papers.sp_mind.bench import CATEGORIES, read_tasks, task_specs
from repro.papers.sp_mind.calls import execute
from repro.papers.sp_mind.cells import FOLDER, GATES, H5AD, WORKFLOW, read_gates, read_h5ad, read_workflow
from repro.papers.sp_mind.skills import Data
from repro.workflow.io import InputError, atomic_path, write_json
from repro.workflow.manifest import file_record, write_manifest


def reference_answers(data: Data, specs: list[dict]) -> list[dict]:
    """Each spec with ``expected``: its reference call's result (a clustering as a list of labels)."""
    out = []
    for spec in specs:
        ref = spec["reference"]
        result, error = execute(data, {"skill": ref["skill"], "params": ref["params"]}, ref.get("hidden"))
        if error is not None:
            raise ValueError(f"task {spec['id']}: the reference call fails ({error})")
        out.append(spec | {"expected": result.tolist() if isinstance(result, np.ndarray) else result})
    return out


def main(job) -> None:
    cfg = job.params.settings["bench"]
    root = Path(job.input.package) / FOLDER
    cells, gates, workflow = read_h5ad(root / H5AD), read_gates(root / GATES), read_workflow(root / WORKFLOW)
    data = Data(cells, gates, workflow)
    if cfg.get("tasks_file"):
        specs = read_tasks(cfg["tasks_file"])
    else:
        specs = task_specs(cfg["tasks_per_category"], data.gate_scale, cfg["seed"], cfg["permutations"])
        keep = list(CATEGORIES)[: cfg["categories"]] if cfg.get("categories") else list(CATEGORIES)
        specs = reference_answers(data, [s for s in specs if s["category"] in keep])
    if not specs:
        raise InputError(root, "no tasks")
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
        settings=cfg,
        details={
            "cells": len(cells),
            "markers": len(gates),
            "tasks": len(specs),
            "categories": len({s["category"] for s in specs}),
            "gate_scale": data.gate_scale,
        },
    )
