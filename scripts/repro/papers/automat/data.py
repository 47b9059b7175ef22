"""Stage: ground-truth monolayers and their simulated HAADF images at every dose (results/automat/data/).

Per template, ``images_per_dose`` ground truths (lattice constant scaled by an isotropic strain within
±strain, random in-plane rotation and shift); each ground truth is imaged once noiselessly and once per
dose. Output ``images.npz`` (noiseless (n, y, x), noisy (n, dose, y, x), doses, template index, a, theta,
shift) and a manifest. With ``source.kind: stem2mat`` the ground truths and images come from the AutoMat
benchmark folder instead (repro.papers.automat.stem2mat).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.papers.automat.forward import noisy, render_template
from repro.papers.automat.stem2mat import read_stem2mat
from repro.papers.automat.templates import LIBRARY
from repro.workflow.io import atomic_path, sha256, write_json


def simulate(gen: dict, cfg: dict, names: list[str]) -> dict:
    """Ground truths drawn per template (strain, rotation, shift) and their images, noiseless and per dose."""
    rng = np.random.default_rng([gen["seed"], 5])
    rows = {k: [] for k in ("template", "a", "theta", "shift", "clean", "noisy")}
    for t, name in enumerate(names):
        for _ in range(gen["images_per_dose"]):
            a = LIBRARY[name].a * (1 + rng.uniform(-gen["strain"], gen["strain"]))
            theta = rng.uniform(0, np.pi / 3)
            shift = rng.uniform(0, a, 2)
            clean = render_template(name, a, theta, shift, cfg)
            rows["template"].append(t)
            rows["a"].append(a)
            rows["theta"].append(theta)
            rows["shift"].append(shift)
            rows["clean"].append(clean)
            rows["noisy"].append([noisy(clean, d, cfg["pixel"], cfg["background"], rng) for d in gen["doses"]])
    arrays = {k: np.asarray(v) for k, v in rows.items()}
    return arrays | {"doses": np.asarray(gen["doses"], float), "names": np.asarray(names)}


def main(job) -> None:
    cfg = job.params.settings["imaging"]
    gen = job.params.settings["generate"]
    source = job.params.settings["source"]
    names = list(gen["templates"])
    if source["kind"] == "stem2mat":
        arrays, summary = read_stem2mat(Path(source["path"]), source, cfg, names)
        origin = {"source": "stem2mat", "path": source["path"], "read": summary}
    else:
        arrays = simulate(gen, cfg, names)
        origin = {
            "source": "embedded",
            "generator": "repro.papers.automat.data (incoherent HAADF model, Poisson noise)",
        }
    with atomic_path(job.output.images) as tmp:
        np.savez_compressed(tmp, **arrays)
    write_json(
        job.output.manifest,
        origin
        | {
            "settings": {"imaging": cfg, "generate": gen, "source": source},
            "images": int(np.isfinite(arrays["noisy"][:, :, 0, 0]).sum()),
            "files": {"images.npz": {"sha256": sha256(job.output.images)}},
        },
    )
