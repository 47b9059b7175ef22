"""Stage ``pai_graphon_evaluate``: graphons, their distance to the Factorised Saliency Model's prediction across
widths (the prediction for seed k's mask is fitted to the scores of seed k + 1, cyclically: another
initialisation and another scoring batch, so the FSM is tested out of sample, as a limit object should be), homogeneity, feature selection, the exact zero-saliency property on digits and NTK alignment; writes
metrics.json, claims.json and the graphons (xarray, zarr) that the figures draw.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from repro.papers.pai_graphon import graphon
from repro.papers.pai_graphon.claims import CLAIMS
from repro.papers.pai_graphon.store import mask_key, read_dataset
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import atomic_path, read_json, write_json
from repro.workflow.stores import open_zarr_group


def mask_stats(
    group, density: float, blocks: int, informative: list[int], zero_inputs: np.ndarray, predicted: np.ndarray
) -> dict:
    """Everything measured on one mask set (hidden layer: layer1, first layer: layer0). ``predicted`` is the
    FSM graphon fitted out of sample: to the scores of another seed (another initialisation and scoring batch)."""
    hidden, first = np.asarray(group["layer1"][...]), np.asarray(group["layer0"][...])
    scores0 = np.asarray(group["scores0"][...])
    width = hidden.shape[0]
    index_graphon = graphon.block_average(hidden, blocks)
    sorted_graphon = graphon.degree_sorted_graphon(hidden, blocks)
    out = {
        "sorted_graphon": sorted_graphon,
        "fsm_graphon": predicted,
        "fsm_distance": graphon.l2_distance(sorted_graphon, predicted),
        "fsm_distance_in_sample": graphon.l2_distance(sorted_graphon, np.asarray(group["fsm_graphon"][...])),
        "constant_distance": graphon.l2_distance(sorted_graphon, np.full_like(sorted_graphon, density)),
        "index_graphon": index_graphon,
        "profile": first.mean(axis=0),
        "cv_ratio_in": graphon.degree_cv(hidden, 1) / graphon.binomial_cv(density, width),
        "cv_ratio_out": graphon.degree_cv(hidden, 0) / graphon.binomial_cv(density, width),
        "flatness_z": graphon.flatness_z(index_graphon, density, (width // blocks) ** 2),
    }
    if informative:
        out["informative_fraction"] = float(first[:, informative].sum() / first.sum())
    if zero_inputs.any():
        out["zero_input_max_abs_score"] = float(np.abs(scores0[:, zero_inputs]).max())
        out["zero_input_kept_edges"] = int(first[:, zero_inputs].sum())
        out["zero_input_kept_fraction"] = float(first[:, zero_inputs].mean())
    return out


def analyse_dataset(masks_path, data_path, s: dict) -> tuple[dict, xr.Dataset]:
    """Statistics per (criterion, width, seed) and seed-averaged graphons/profiles of one dataset."""
    data = read_dataset(data_path)
    root = open_zarr_group(masks_path)
    widths, seeds, blocks = s["widths"], s["seeds"], s["blocks"]
    stats: dict = {c: {} for c in s["criteria"]}
    shape = (len(s["criteria"]), len(widths), blocks, blocks)
    sorted_g, index_g, fsm_g = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    profile = np.zeros((len(s["criteria"]), len(widths), data["X"].shape[1]))
    for ci, criterion in enumerate(s["criteria"]):
        for wi, width in enumerate(widths):
            per_seed = []
            for k, seed in enumerate(seeds):
                batch = np.asarray(root.attrs[f"batch_idx_s{seed}"])
                zero_inputs = np.all(data["X"][batch] == 0, axis=0)
                group = open_zarr_group(masks_path, mask_key(criterion, width, seed))
                other = open_zarr_group(masks_path, mask_key(criterion, width, seeds[(k + 1) % len(seeds)]))
                predicted = np.asarray(other["fsm_graphon"][...])
                per_seed.append(
                    mask_stats(group, s["density"], blocks, data["informative_idx"], zero_inputs, predicted)
                )
            sorted_g[ci, wi] = np.mean([p["sorted_graphon"] for p in per_seed], 0)
            index_g[ci, wi] = np.mean([p["index_graphon"] for p in per_seed], 0)
            fsm_g[ci, wi] = np.mean([p["fsm_graphon"] for p in per_seed], 0)
            profile[ci, wi] = np.mean([p["profile"] for p in per_seed], 0)
            scalars = [k for k, v in per_seed[0].items() if np.isscalar(v)]
            stats[criterion][str(width)] = {k: [p[k] for p in per_seed] for k in scalars}
        stats[criterion]["fsm"] = {
            "widths": widths,
            "distance": [stats[criterion][str(w)]["fsm_distance"] for w in widths],  # (width, seed)
            "constant_distance": [stats[criterion][str(w)]["constant_distance"] for w in widths],
        }
    stats["k_over_d"] = len(data["informative_idx"]) / data["X"].shape[1]
    coords = {
        "criterion": s["criteria"],
        "width": widths,
        "u": (np.arange(blocks) + 0.5) / blocks,
        "v": (np.arange(blocks) + 0.5) / blocks,
        "input": np.arange(data["X"].shape[1]),
    }
    ds = xr.Dataset(
        {
            "sorted_graphon": (("criterion", "width", "u", "v"), sorted_g),
            "index_graphon": (("criterion", "width", "u", "v"), index_g),
            "fsm_graphon": (("criterion", "width", "u", "v"), fsm_g),
            "profile": (("criterion", "width", "input"), profile),
        },
        coords=coords,
        attrs={"density": s["density"], "informative_idx": data["informative_idx"]},
    )
    return stats, ds


def main(job) -> None:
    s = job.params.settings
    metrics, graphons = {}, {}
    for name in ("synthetic", "digits"):
        metrics[name], graphons[name] = analyse_dataset(
            getattr(job.input, f"masks_{name}"), getattr(job.input, f"data_{name}"), s
        )
    metrics["train"] = read_json(job.input.train)
    metrics["settings"] = {k: s[k] for k in ("widths", "seeds", "density", "blocks", "informative_factor")}
    with atomic_path(job.output.graphons) as tmp:
        xr.concat(list(graphons.values()), dim=xr.DataArray(list(graphons), dims="dataset", name="dataset")).to_zarr(
            tmp, mode="w"
        )
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "pai-graphon", claims)
