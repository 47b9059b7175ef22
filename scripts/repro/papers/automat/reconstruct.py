"""Stage: the feed-forward pipeline and the closed loop on every recorded image, and the feed-forward pipeline on
the noiseless check images; CIFs out.

``reconstructions.parquet``: one row per (image, dose, method) with the reconstruction's CIF, reduced formula,
in-plane lattice (a, b, gamma), retries, whether it was verified, the denoising expert, the verification NCC,
its lattice source, its MLIP formation energy, and the cell (2 x 2, Å, image frame) and origin (Å) it was
found at in the image (a CIF keeps neither the in-plane orientation nor the shift). ``energies.json``: the MLIP's formation energy of every
ground truth (the same MLIP scores reconstructions and truths).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from repro.papers.automat import controller
from repro.papers.automat.chemistry import in_plane_lattice
from repro.papers.automat.data import cif_text
from repro.papers.automat.mlip import MLIP
from repro.workflow.io import InputError, atomic_path, write_json
from repro.workflow.progress import Progress

NOISELESS_DOSE = 1e6  # e/Å^2: the counts of a check image, without noise


def row(image: int, dose: float, method: str, result: dict, energy) -> dict:
    h = result["hypothesis"]
    base = {"image": image, "dose": float(dose), "method": method, "retries": int(result["retries"]),
            "verified": bool(result["verified"]), "expert": int(result["expert"])}  # fmt: skip
    if h is None:
        return base | {"cif": None, "formula": None, "a": np.nan, "b": np.nan, "gamma": np.nan, "ncc": np.nan,
                       "lattice_source": None, "grouping": None, "energy": np.nan, "cell": None,
                       "origin": None}  # fmt: skip
    structure = h.structure()
    a, b, gamma = in_plane_lattice(structure)
    return base | {"cif": cif_text(structure), "formula": structure.composition.reduced_formula, "a": a, "b": b,
                   "gamma": gamma, "ncc": float(h.ncc), "lattice_source": h.source, "grouping": h.grouping,
                   "energy": float(energy(h)), "cell": h.cell.ravel().tolist(),
                   "origin": h.origin.tolist()}  # fmt: skip


def main(job) -> None:
    from pymatgen.core import Structure

    settings = job.params.settings
    imaging = settings["imaging"] | settings["denoise"]
    cfg, verify_cfg = settings["controller"], settings["verify"]
    with np.load(job.input.images) as z:
        missing = [k for k in ("noisy", "doses", "truth_cif", "check_clean") if k not in z.files]
        if missing:
            raise InputError(job.input.images, f"missing arrays {missing}")
        noisy, doses, truth_cif = z["noisy"], z["doses"], [str(c) for c in z["truth_cif"]]
        check_clean = z["check_clean"]
    recorded = np.isfinite(noisy).all(axis=(2, 3))  # a benchmark image exists at its own dose only
    progress = Progress("automat reconstruct", total=int(recorded.sum()) + len(check_clean), unit="images")
    jobs, checks = [], []
    with threadpool_limits(1):  # many tiny matrix products: BLAS threads only add contention
        for i, k in zip(*np.nonzero(recorded)):
            jobs.append(
                (int(i), float(doses[k]), controller.prepare(noisy[i, k], float(doses[k]), imaging, cfg, verify_cfg))
            )
            progress.update()
        for i, clean in enumerate(check_clean):
            counts = NOISELESS_DOSE * imaging["pixel"] ** 2 * (imaging["background"] + clean)
            checks.append(
                (i, controller.prepare(counts, NOISELESS_DOSE, imaging, cfg | {"max_retries": 0}, verify_cfg))
            )
            progress.update()
    mlip = MLIP(settings["mlip"]["model"])
    requests = {}
    for _, _, attempts in jobs:
        for h in controller.energy_requests(attempts, cfg):
            requests.setdefault(h.key(), h)
    for _, attempts in checks:
        for h in attempts.first[2][:1]:
            requests.setdefault(h.key(), h)
    keys = list(requests)
    table = dict(zip(keys, mlip.formation([requests[k].structure() for k in keys])))

    def energy(h) -> float:
        return float(table[h.key()])

    rows = []
    for i, dose, attempts in jobs:
        rows.append(row(i, dose, "feed_forward", controller.feed_forward(attempts), energy))
        rows.append(row(i, dose, "closed_loop", controller.closed_loop(attempts, cfg, energy), energy))
    for i, attempts in checks:
        rows.append(row(i, NOISELESS_DOSE, "noiseless_check", controller.feed_forward(attempts), energy))
    truths = mlip.formation([Structure.from_str(c, fmt="cif") for c in truth_cif])
    with atomic_path(job.output.reconstructions) as tmp:
        pd.DataFrame(rows).to_parquet(tmp, index=False)
    write_json(job.output.energies, {"model": mlip.name, "truth_formation": truths.tolist(),
                                     "structures_evaluated": len(keys)})  # fmt: skip
