"""Stage: every policy tracks every clip under the same random pushes; per-clip errors and failures."""

from __future__ import annotations

import numpy as np

from repro.papers.tvs import control
from repro.papers.tvs.humanoid import JOINT_GROUPS, load
from repro.papers.tvs.store import read_motions
from repro.workflow.io import write_json
from repro.workflow.progress import Progress


def main(job) -> None:
    s = job.params.settings
    h = load(job.input.package, s["timestep"])
    mo = read_motions(job.input.motions, h.model.nq, h.model.nv)
    fps = float(mo["fps"])
    out = {p: [] for p in s["policies"]}
    progress = Progress("tvs tracking", total=len(mo["qpos"]), unit="clip")
    for i in range(len(mo["qpos"])):
        pushes = control.pushes(h, mo["qpos"].shape[1], fps, np.random.default_rng([s["push_seed"], i]), s["pushes"])
        for name, policy in s["policies"].items():
            r = control.track(h, mo["qpos"][i], mo["qvel"][i], mo["qacc"][i], fps, policy, pushes, s["pushes"])
            err = r.pop("body_errors")
            out[name].append(r | {"body_error_mm": (err.mean(0) * 1000).tolist()})
        progress.update(1)
    write_json(
        job.output.tracking,
        {
            "bodies": h.body_names,
            "body_group": h.body_group.tolist(),
            "group_names": list(JOINT_GROUPS),
            "policies": out,
        },
    )
