"""Stage: the rod, its buckled start and every task case's reachable target, under results/neural-control/data/.

One ``<task>.npz`` per task: start equilibrium ``x0``/``z0``, per case the ``target`` (T1 node position (2,),
T2 midpoint path (steps, 2), T3 curvature profile (N-2,)), the targeted ``node``, the control ``path`` that
realises the target and the target's ``branch`` (+1 up, -1 down); ``manifest.json`` records settings and
sha256 of each file.
"""

from __future__ import annotations

import numpy as np

from repro.papers.neural_control.cases import buckled_start, make_case
from repro.papers.neural_control.rod import Rod
from repro.workflow.io import atomic_path, sha256, write_json


def rod_of(settings: dict) -> Rod:
    cfg = settings["rod"]
    return Rod(int(cfg["nodes"]), float(cfg["length"]), float(cfg["ea"]), float(cfg["ei"]))


def main(job) -> None:
    settings = job.params.settings
    rod = rod_of(settings)
    x0, z0 = buckled_start(rod, float(settings["rod"]["compression"]))
    seed = int(settings["data_seed"])
    files = {}
    for name in settings["tasks"]:
        cfg = settings["tasks"][name]
        cases = [make_case(name, c, rod, x0, z0, cfg, seed) for c in range(int(settings["cases"]))]
        arrays = {
            "x0": x0,
            "z0": z0,
            "rod": np.array([rod.nodes, rod.length, rod.ea, rod.ei]),
            "steps": np.int64(cfg["steps"]),
            "bound": np.float64(cfg["bound"]),
            "target": np.stack([task.target for task, _, _ in cases]),
            "node": np.array([task.node for task, _, _ in cases]),
            "path": np.stack([path for _, path, _ in cases]),
            "branch": np.array([b for _, _, b in cases]),
        }
        with atomic_path(job.output[name]) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, **arrays)
        files[f"{name}.npz"] = {"sha256": sha256(job.output[name])}
    write_json(
        job.output.manifest,
        {"source": "embedded", "generator": "repro.papers.neural_control.data", "settings": settings, "files": files},
    )
