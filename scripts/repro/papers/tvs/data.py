"""Stage: reference motions of graded difficulty with injected flaws, for dm-control's CMU humanoid."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.papers.tvs import motions
from repro.papers.tvs.humanoid import XML, load
from repro.papers.tvs.store import write_motions
from repro.workflow.manifest import file_record, write_manifest


def generate_all(package: str, s: dict) -> dict:
    """Clips cycling through the families with difficulty levels spread evenly over [0, 1] (in a seeded order)."""
    h = load(package, s["timestep"])
    n, frames, fps = s["clips"], s["frames"], s["fps"]
    rng = np.random.default_rng(s["motion_seed"])
    levels = rng.permutation(np.linspace(0, 1, n))
    flawed = rng.permutation(n) < round(s["flaws"]["share"] * n)
    out = {k: [] for k in ("qpos", "qvel", "qacc", "flaw_mask", "family", "level", "flaw")}
    for i in range(n):
        family = motions.FAMILIES[i % len(motions.FAMILIES)]
        clip_rng = np.random.default_rng([s["motion_seed"], i])
        qpos = motions.generate(h, family, float(levels[i]), frames, fps, clip_rng, s["motion"])
        mask, kind = np.zeros(frames, dtype=bool), "none"
        if flawed[i]:
            qpos, mask, kind = motions.inject(h, qpos, clip_rng, s["flaws"])
        qvel, qacc = motions.derivatives(h, qpos, fps)
        for key, value in zip(out, (qpos, qvel, qacc, mask, family, float(levels[i]), kind), strict=True):
            out[key].append(value)
    return {k: np.array(v) for k, v in out.items()} | {"fps": float(fps), "model_xml": XML}


def main(job) -> None:
    s = job.params.settings
    report, inputs = None, []
    if s["source"] == "generated":
        arrays = generate_all(job.input.package, s)
    else:
        from repro.papers.tvs.mocap import convert_files

        arrays, report = convert_files(job.input.package, s)
        inputs = [file_record(f, s["mocap"]["root"], role="input") for f in report.pop("inputs")]
    write_motions(job.output.motions, **arrays)
    root = Path(job.output.manifest).parent
    keys = ("source", "clips", "frames", "fps", "motion_seed", "motion", "flaws", "timestep", "mocap")
    write_manifest(
        job.output.manifest,
        source="embedded" if s["source"] == "generated" else "local",
        producer="repro.papers.tvs.data",
        files=[file_record(job.output.motions, root)] + inputs,
        licence="generated motions; humanoid model from dm-control 1.0.50 (Apache-2.0)"
        if s["source"] == "generated"
        else "AMASS / BVH files of the user (AMASS: non-commercial, per-subset licences); dm-control model Apache-2.0",
        settings={k: s[k] for k in keys},
        packages=["mujoco"],
        details={"mocap": report} if report else None,
    )
