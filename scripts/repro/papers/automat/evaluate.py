"""Stage: structure matching (pymatgen StructureMatcher), lattice errors, formation-energy errors, the checks,
metrics.json and claims.json.

- match: StructureMatcher(ltol, stol, angle_tol) says the reconstruction (its CIF) and the ground truth are
  the same structure (species and geometry); both cells are first given the same c (the larger of the two,
  Cartesian heights kept), as a projection says nothing about the vacuum;
- lattice error: the relative error of the Gauss-reduced in-plane lattice parameters, (|a - a*| / a* +
  |b - b*| / b*) / 2, every image (an image without a reconstruction counts as error 1);
- lattice RMSD: RMS distance (Å) of matched sites after the matcher's alignment (matched pairs only);
- formation-energy error (eV/atom): |E_f(reconstruction) - E_f(truth)|, both from the same MLIP (CHGNet).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.papers.automat.analysis import find_columns
from repro.papers.automat.chemistry import in_plane_lattice
from repro.papers.automat.claims import CLAIMS
from repro.papers.automat.forward import ncc, render_structure, structure_columns, tile
from repro.papers.automat.verifier import render as verifier_render
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, read_json, write_json

METHODS = ("feed_forward", "closed_loop")
NOISELESS = 1e6  # e/Å^2 of the peak-fit check's counts (no noise)


def comparable(truth, reconstruction):
    """Both structures with the same c axis (the larger), Cartesian heights about the layer's middle kept."""
    from pymatgen.core import Lattice, Structure

    c = max(truth.lattice.c, reconstruction.lattice.c)
    out = []
    for s in (truth, reconstruction):
        m = np.asarray(s.lattice.matrix)
        lattice = Lattice([m[0], m[1], [0.0, 0.0, c]])
        z = np.asarray(s.cart_coords)[:, 2]
        z = z - (z.max() + z.min()) / 2 + c / 2
        frac = np.column_stack([np.asarray(s.frac_coords)[:, :2], z / c])
        out.append(Structure(lattice, s.species, frac))
    return out


def lattice_error(truth, a: float, b: float) -> float:
    if not np.isfinite(a):
        return 1.0
    ta, tb, _ = in_plane_lattice(truth)
    return float((abs(a - ta) / ta + abs(b - tb) / tb) / 2)


def match_rows(rec: pd.DataFrame, truth_cif: list[str], truth_energy: np.ndarray, matcher) -> pd.DataFrame:
    from pymatgen.core import Structure

    truths = [Structure.from_str(c, fmt="cif") for c in truth_cif]
    cache: dict = {}
    out = []
    for r in rec.itertuples():
        truth = truths[r.image]
        if r.cif is None:
            matched, rms = False, float("nan")
        else:
            key = (r.image, r.cif)
            if key not in cache:
                t, s = comparable(truth, Structure.from_str(r.cif, fmt="cif"))
                matched = bool(matcher.fit(t, s))
                dist = matcher.get_rms_dist(t, s) if matched else None
                scale = (t.volume / len(t)) ** (1 / 3)
                cache[key] = (matched, float(dist[0] * scale) if dist else float("nan"))
            matched, rms = cache[key]
        energy_error = abs(float(r.energy) - float(truth_energy[r.image])) if r.cif is not None else float("nan")
        out.append({"image": r.image, "dose": r.dose, "method": r.method, "match": matched, "rmsd": rms,
                    "lattice_error": lattice_error(truth, r.a, r.b), "energy_error": energy_error,
                    "retries": r.retries, "verified": r.verified, "formula_correct": r.formula ==
                    truth.composition.reduced_formula})  # fmt: skip
    return pd.DataFrame(out)


def forward_checks(z, imaging: dict, controller_cfg: dict, verify_cfg: dict) -> dict:
    """On the simulated check truths: the generator re-renders each from its CIF (NCC with the stored image); the
    reconstruction's two-pass Gaussian column fit (:func:`repro.papers.automat.analysis.find_columns`) on the
    noiseless image recovers the interior columns (largest distance from a true column to its nearest fitted
    peak, Å); the verification model's image of the same truth (NCC with the generator's)."""
    from pymatgen.core import Structure

    extent = imaging["shape"] * imaging["pixel"]
    rerender, errors, cross = [], [], []
    for cif, theta, shift, clean in zip(z["check_truth_cif"], z["check_theta"], z["check_shift"], z["check_clean"]):
        structure = Structure.from_str(str(cif), fmt="cif")
        rerender.append(ncc(render_structure(structure, float(theta), shift, imaging), clean))
        vectors, frac, weights, numbers = structure_columns(structure, float(theta))
        pos, _ = tile(vectors, frac, weights, np.asarray(shift, float), extent)
        counts = NOISELESS * imaging["pixel"] ** 2 * clean
        fitted, _ = find_columns(counts, NOISELESS, imaging["pixel"], imaging["sigma"], controller_cfg)
        margin = 6 * imaging["pixel"]
        interior = pos[np.all((pos > margin) & (pos < extent - margin), axis=1)]
        if len(interior) and len(fitted):
            errors.append(float(np.max(np.linalg.norm(interior[:, None, :] - fitted[None], axis=-1).min(axis=1))))
        image = verifier_render(vectors, frac, numbers, np.asarray(shift, float), imaging["shape"], imaging["pixel"],
                                verify_cfg)  # fmt: skip
        cross.append(ncc(image, clean))
    return {
        "rerender_min_ncc": float(np.min(rerender)),
        "peak_fit_max_error": float(np.max(errors)) if errors else float("nan"),
        "verifier_vs_generator_ncc": [float(v) for v in cross],
    }


def summarise(rows: pd.DataFrame) -> dict:
    main = rows[rows["method"].isin(METHODS)]
    by: dict = {}
    for (method, dose), g in main.groupby(["method", "dose"]):
        by.setdefault(method, {})[str(dose)] = {
            "accuracy": float(g["match"].mean()),
            "lattice_error": float(g["lattice_error"].mean()),
            "rmsd_matched": float(g["rmsd"].mean()) if g["match"].any() else float("nan"),
            "formation_mae": float(g["energy_error"].mean()),
            "mean_retries": float(g["retries"].mean()),
            "verified": float(g["verified"].mean()),
        }
    paired = main.pivot_table(
        index=["image", "dose"], columns="method", values=["match", "lattice_error", "energy_error"]
    )
    noiseless = rows[rows["method"] == "noiseless_check"]
    return {
        "by_method_dose": by,
        "doses": sorted(float(d) for d in main["dose"].unique()),
        "per_image": {
            "dose": [float(d) for d in paired.index.get_level_values("dose")],
            **{
                f"{key}_{short}": paired[(key, method)].astype(float).tolist()
                for key in ("match", "lattice_error", "energy_error")
                for short, method in (("loop", "closed_loop"), ("ff", "feed_forward"))
            },
        },  # fmt: skip
        "accuracy": {m: float(g["match"].mean()) for m, g in main.groupby("method")},
        "formation_mae": {m: float(g["energy_error"].mean()) for m, g in main.groupby("method")},
        "formation_mae_matched": {
            m: float(g.loc[g["match"], "energy_error"].mean()) for m, g in main.groupby("method")
        },
        "rmsd_matched": {m: float(g.loc[g["match"], "rmsd"].mean()) for m, g in main.groupby("method")},
        "noiseless_accuracy": float(noiseless["match"].mean()),
        "noiseless_images": int(len(noiseless)),
    }


def main(job) -> None:
    from pymatgen.analysis.structure_matcher import StructureMatcher

    settings = job.params.settings
    rec = pd.read_parquet(job.input.reconstructions)
    energies = read_json(job.input.energies)
    matcher = StructureMatcher(**settings["matcher"])
    with np.load(job.input.images) as z:
        if "check_truth_cif" not in z.files:
            raise InputError(job.input.images, "no check_* arrays (rerun the data stage)")
        truth_cif = [str(c) for c in z["truth_cif"]]
        check_cif = [str(c) for c in z["check_truth_cif"]]
        checks = forward_checks(z, settings["imaging"], settings["controller"], settings["verify"])
    main_rows = match_rows(
        rec[rec["method"] != "noiseless_check"], truth_cif, np.asarray(energies["truth_formation"]), matcher
    )
    check_rows = match_rows(
        rec[rec["method"] == "noiseless_check"], check_cif, np.full(len(check_cif), np.nan), matcher
    )
    rows = pd.concat([main_rows, check_rows], ignore_index=True)
    metrics = (
        summarise(rows)
        | checks
        | {
            "bootstrap_resamples": settings["checks"]["bootstrap_resamples"],
            "mlip": energies["model"],
            "mlip_structures": energies["structures_evaluated"],
        }
    )
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "automat", claims)
