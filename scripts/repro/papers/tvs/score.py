"""Stage: per-frame and per-clip TVS, the MDS components, the difficulty proxies and the consistency checks."""

from __future__ import annotations

import numpy as np

from repro.papers.tvs import torque
from repro.papers.tvs.humanoid import load
from repro.papers.tvs.store import read_motions
from repro.workflow.io import write_json


def main(job) -> None:
    s = job.params.settings
    h = load(job.input.package, s["timestep"])
    mo = read_motions(job.input.motions, h.model.nq, h.model.nv)
    cfg = s["score"]
    clips = []
    for i in range(len(mo["qpos"])):
        rng = np.random.default_rng([cfg["seed"], i])
        sc = torque.clip_scores(h, mo["qpos"][i], mo["qvel"][i], mo["qacc"][i], rng, cfg)
        sc |= torque.proxies(h, mo["qvel"][i], mo["qacc"][i], float(mo["fps"]))
        sc["frame_acceleration"] = torque.frame_acceleration(h, mo["qacc"][i]).tolist()
        clips.append(sc)
    hardest = int(np.argmax([c["tvs"] for c in clips]))
    t = len(mo["qpos"][hardest]) // 2
    checks = torque.consistency(
        h,
        mo["qpos"][hardest][t],
        mo["qvel"][hardest][t],
        mo["qacc"][hardest][t],
        np.random.default_rng(cfg["seed"]),
        cfg["eps"],
        cfg["perturbations"],
    )
    write_json(job.output.scores, {"clips": clips, "checks": checks | {"clip": hardest, "frame": t}})
