"""Stage: scenes in the canonical format (rendered from pybullet_data assets, or read from ScanNet) and the
spatial QA pairs generated from their ground truth."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.papers.holi_spatial import qa
from repro.papers.holi_spatial.scannet import read_scannet_scene
from repro.papers.holi_spatial.scene import render_scene
from repro.papers.holi_spatial.store import write_scene
from repro.workflow.io import atomic_path, write_json
from repro.workflow.manifest import file_record, write_manifest
from repro.workflow.progress import Progress


def main(job) -> None:
    s = job.params.settings
    pairs, reports, inputs = [], {}, []
    with atomic_path(job.output.scenes) as folder:
        folder.mkdir(parents=True)
        names = s["scannet"]["scenes"] if s["source"] == "scannet" else [str(i) for i in range(s["scenes"])]
        progress = Progress("holi-spatial scenes", total=len(names))
        for i, name in enumerate(names):
            if s["source"] == "scannet":
                sc = s["scannet"]
                scene, report = read_scannet_scene(
                    sc["root"], name, sc["frame_stride"], sc["max_frames"], sc["max_refused"]
                )
                inputs += [file_record(f, sc["root"], role="input") for f in report.pop("inputs")]
                reports[name] = report
            else:
                scene = render_scene(
                    int(np.random.SeedSequence([s["scene_seed"], i]).generate_state(1)[0]), s["render"]
                )
            write_scene(folder / f"scene_{i:03d}.npz", scene)
            rng = np.random.default_rng([s["scene_seed"], i, 1])
            pairs += [{"scene": i} | q for q in qa.generate(scene, rng, s["qa"]["per_template"], s["qa"]["min_pixels"])]
            progress.update(1)
    root = Path(job.output.manifest).parent
    files = [file_record(f, root) for f in sorted(Path(job.output.scenes).glob("*.npz"))]
    write_json(job.output.qa, pairs)
    write_manifest(
        job.output.manifest,
        source="scannet" if s["source"] == "scannet" else "embedded",
        producer="repro.papers.holi_spatial.data",
        files=files + [file_record(job.output.qa, root)] + inputs,
        licence="pybullet_data assets (zlib licence, Bullet Physics)"
        if s["source"] != "scannet"
        else "ScanNet terms of use (no redistribution of derived data)",
        settings={k: s[k] for k in ("source", "scenes", "scene_seed", "render", "qa", "scannet")},
        packages=["pybullet"],
        details={"scannet_scenes": reports} if reports else None,
    )
