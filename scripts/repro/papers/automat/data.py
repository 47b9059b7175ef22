"""Stage: ground-truth monolayers and their images (results/automat/data/images.npz) and a manifest.

Embedded default: per family of ``generate.families`` (:data:`repro.papers.automat.chemistry.FAMILIES`),
``images_per_dose`` ground truths (lattice constant scaled by an isotropic strain within +-strain, random
in-plane rotation and shift), each imaged once noiselessly by the generator's forward model and once per dose.
With ``source.kind: stem2mat`` the ground truths and images come from the AutoMat benchmark folder instead
(:mod:`repro.papers.automat.stem2mat`), every composition kept. Either way ``checks.images`` simulated truths
are imaged noiselessly for the forward-model and noiseless-reconstruction checks (``check_*`` arrays).

Arrays: ``truth_cif`` (CIF text), ``family``, ``a``, ``theta``, ``shift`` (NaN when a benchmark gives no
rotation), ``clean`` (n, y, x), ``noisy`` (n, dose, y, x; NaN at doses a sample was not recorded at), ``doses``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.papers.automat.chemistry import FAMILIES, to_structure
from repro.papers.automat.forward import noisy, render_structure
from repro.papers.automat.stem2mat import read_stem2mat
from repro.workflow.io import atomic_path, sha256, write_json


def cif_text(structure) -> str:
    from pymatgen.io.cif import CifWriter

    return str(CifWriter(structure))


def truths(families: list[str], per_family: int, strain: float, imaging: dict, rng: np.random.Generator) -> dict:
    """Ground truths drawn per family (strain, rotation, shift) with their noiseless images."""
    rows = {k: [] for k in ("truth_cif", "family", "a", "theta", "shift", "clean")}
    for name in families:
        family = FAMILIES[name]
        for _ in range(per_family):
            a = family.a * (1 + rng.uniform(-strain, strain))
            theta = rng.uniform(0, np.pi / 3)
            shift = rng.uniform(0, a, 2)
            structure = to_structure(family.atoms(a))
            rows["truth_cif"].append(cif_text(structure))
            rows["family"].append(name)
            rows["a"].append(a)
            rows["theta"].append(theta)
            rows["shift"].append(shift)
            rows["clean"].append(render_structure(structure, theta, shift, imaging))
    return {k: np.asarray(v) for k, v in rows.items()}


def simulate(gen: dict, imaging: dict) -> dict:
    rng = np.random.default_rng([gen["seed"], 5])
    out = truths(list(gen["families"]), int(gen["images_per_dose"]), float(gen["strain"]), imaging, rng)
    out["noisy"] = np.stack(
        [[noisy(c, d, imaging["pixel"], imaging["background"], rng) for d in gen["doses"]] for c in out["clean"]]
    )
    return out | {"doses": np.asarray(gen["doses"], float)}


def check_set(gen: dict, imaging: dict, count: int) -> dict:
    """``count`` simulated truths (cycling through the families) for the checks, noiseless."""
    rng = np.random.default_rng([gen["seed"], 11])
    names = [gen["families"][k % len(gen["families"])] for k in range(count)]
    parts = [truths([n], 1, float(gen["strain"]), imaging, rng) for n in names]
    return {f"check_{k}": np.concatenate([p[k] for p in parts]) for k in parts[0]}


def main(job) -> None:
    settings = job.params.settings
    imaging, gen, source = settings["imaging"], settings["generate"], settings["source"]
    if source["kind"] == "stem2mat":
        arrays, summary = read_stem2mat(Path(source["path"]), source, imaging)
        origin = {"source": "stem2mat", "path": source["path"], "read": summary}
    else:
        arrays = simulate(gen, imaging)
        origin = {
            "source": "embedded",
            "generator": "repro.papers.automat.data (incoherent HAADF model, Poisson noise)",
        }
    arrays |= check_set(gen, imaging, int(settings["checks"]["images"]))
    with atomic_path(job.output.images) as tmp:
        np.savez_compressed(tmp, **arrays)
    write_json(
        job.output.manifest,
        origin
        | {
            "settings": {"imaging": imaging, "generate": gen, "source": source},
            "images": int(np.isfinite(arrays["noisy"][:, :, 0, 0]).sum()),
            "families": sorted(set(map(str, arrays["family"]))),
            "files": {"images.npz": {"sha256": sha256(job.output.images)}},
        },
    )
