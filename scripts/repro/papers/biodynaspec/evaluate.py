"""Rule entry ``biodynaspec_evaluate``: generate held-out trajectories with every model, score them, check claims.

Evaluation items: each test protein conditioned on frame 0 of its first replicate (MD
reference = all its replicates, as AlphaFlow), and each held-out replicate of a training
protein (reference = its held-out replicates). Everything is in Angstrom on C-alpha.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import torch

from repro.data.atlas.splits import read_split
from repro.papers.biodynaspec import metrics as M
from repro.papers.biodynaspec.claims import CLAIMS, FULL_SCALE
from repro.papers.biodynaspec.data import load_ca, read_meta, residue_types, to_slots, training_windows
from repro.papers.biodynaspec.generate import generate, load_model, untrained_model
from repro.papers.biodynaspec.geometry import superpose
from repro.papers.biodynaspec.registry import MODELS
from repro.papers.biodynaspec.spectral_checks import check_trajectory
from repro.papers.biodynaspec.synthetic import synthetic_checks
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.device import pick_device
from repro.workflow.io import atomic_path, write_json

log = logging.getLogger(__name__)
PAPER = "biodynaspec"
ENSEMBLE_KEYS = ("rmwd", "md_pca_w2", "joint_pca_w2", "pca_psd_logcorr", "cfre")


def evaluation_items(meta, splits_dir: Path, heldout: list[int]) -> list[tuple[str, int, list[int]]]:
    """(protein, conditioning replicate, reference replicates) of every evaluation trajectory."""
    items = []
    for name in read_split(splits_dir / "atlas_test.csv"):
        reps = sorted(int(r) for r in meta.loc[meta["name"] == name, "replicate"])
        items.append((name, reps[0], reps))
    for name in read_split(splits_dir / "atlas_train.csv"):
        reps = [r for r in heldout if r in set(meta.loc[meta["name"] == name, "replicate"])]
        items += [(name, r, reps) for r in reps]
    return items


HELDOUT_LOSS_DRAWS = 4


def heldout_windows(processed: Path, meta, items: list, window: int) -> list:
    """Windows of the evaluation items' conditioning replicates (every ``window // 2`` frames): the held-out
    data of the learning checks."""
    sets = []
    for name, rep, _ in items:
        (found,) = training_windows(processed, meta, [name], [rep], window) or [None]
        if found is not None:
            keep = np.arange(0, len(found.anchors), max(1, window // 2))
            sets.append(type(found)(found.name, found.types, found.anchors[keep], found.deltas[keep]))
    return sets


@torch.no_grad()
def heldout_losses(net, model: str, sets: list, scales: np.ndarray, device) -> list[float]:
    """The training objective (denoising or flow-matching loss) of ``net`` on every held-out window, each the
    mean of HELDOUT_LOSS_DRAWS draws of (band or time, noise level, noise) seeded by window and draw, so a
    trained network and its initialisation meet the same draws."""
    rep = MODELS[model].representation
    out, k = [], 0
    for s in sets:
        slots = to_slots(s.deltas, rep) / scales[None, :, None, None]
        types = torch.as_tensor(s.types[None], device=device)
        for w in range(len(s.anchors)):
            anchor = torch.as_tensor(s.anchors[w : w + 1], dtype=torch.float32, device=device)
            target = torch.as_tensor(slots[w : w + 1], dtype=torch.float32, device=device)
            draws = []
            for d in range(HELDOUT_LOSS_DRAWS):
                torch.manual_seed(10_000 + 100 * k + d)
                draws.append(float(net.loss(anchor, types, target)))
            out.append(float(np.mean(draws)))
            k += 1
    return out


def score_item(trajs: np.ndarray, true: np.ndarray, md_all: np.ndarray, settings: dict, md_basis=None) -> dict:
    """R_s curve (mean over samples) and ensemble metrics of one model on one evaluation item; ``md_basis``
    (mean, components) is the PCA of all MD frames, the same for every model of the item (computed once)."""
    start = true[0]
    curves = np.array([M.r_s_curve(t, true, include_first=settings["rs_include_first"]) for t in trajs])
    out = {"r_s": curves.mean(0).tolist()}
    # R_s of each sample at the report length, or at the trajectory's own length when it is shorter
    out["r_s_per_sample"] = curves[:, min(settings["rs_report"], curves.shape[1]) - 1].tolist()
    if len(md_all) < settings["min_ensemble_frames"]:
        return out
    gen = superpose(trajs[:, 1:].reshape(-1, *start.shape), start)
    n = min(len(gen), len(md_all), settings["ensemble_size"])
    gen_s = gen[M.random_subset(len(gen), n, 137)]
    md1 = md_all[M.random_subset(len(md_all), n, 137)]
    md1k = md_all[M.random_subset(len(md_all), 1000, 138)]
    out.update(
        {
            "rmwd": M.rmwd(md1k, gen_s),
            "md_pca_w2": M.pca_w2(md_all, md1, gen_s, k=settings["pca_k"], basis=md_basis),
            "joint_pca_w2": M.pca_w2(md_all, md1, gen_s, k=settings["pca_k"], joint=True),
            "cfre": M.cfre(md_all, gen),
        }
    )
    if len(true) >= settings["min_ensemble_frames"]:
        md_traj = superpose(true[: 1 + settings["num_frames"]], start)
        out["pca_psd_logcorr"] = M.pca_psd_logcorr(
            md_traj, [superpose(t, start) for t in trajs], md_all, k=settings["psd_pcs"], basis=md_basis
        )
    return out


def summarise(per_item: dict[str, dict], s_report: int) -> dict:
    """Mean R_s at ``s_report`` over items long enough, mean curve, medians of ensemble metrics."""
    curves = [v["r_s"] for v in per_item.values() if len(v["r_s"]) >= s_report]
    out = {
        "r_s_report": float(np.mean([c[s_report - 1] for c in curves])) if curves else None,
        "r_s_curve": np.mean([c[:s_report] for c in curves], 0).tolist() if curves else [],
        "n_items_r_s": len(curves),
    }
    for key in ENSEMBLE_KEYS:
        values = [v[key] for v in per_item.values() if key in v]
        out[key] = float(np.median(values)) if values else None
    return out


def main(job) -> None:
    settings, scale = job.params.settings, job.params.scale
    processed, meta = Path(job.input.processed), read_meta(job.input.meta)
    reported = load_reported(job.input.reported)
    device = pick_device(job.params.device)
    nets = {Path(p).stem: load_model(p, settings, device) for p in job.input.models}
    items = evaluation_items(meta, Path(job.input.splits), settings["heldout_replicates"])
    held = heldout_windows(processed, meta, items, settings["window"])
    learning = {}
    for name, (net, scales) in nets.items():
        init = untrained_model(name, settings, int(job.params.seed), device)
        learning[name] = {
            "loss": heldout_losses(net, name, held, scales, device),
            "init_loss": heldout_losses(init, name, held, scales, device),
        }
    per_model: dict[str, dict] = {m: {} for m in settings["models"]}
    samples: dict[str, np.ndarray] = {}
    checks = None
    for i, (name, rep, refs) in enumerate(items):
        key = f"{name}_R{rep}"
        true = load_ca(processed, name, rep).astype(np.float64)
        md_all = superpose(np.concatenate([load_ca(processed, name, r) for r in refs]).astype(np.float64), true[0])
        samples[f"md/{key}"] = md_all.astype(np.float32)
        samples[f"true/{key}"] = true.astype(np.float32)
        if checks is None and len(true) > 2 * settings["window"]:
            checks = check_trajectory(true, settings["window"])
        types = residue_types(meta.loc[meta["name"] == name, "sequence"].iloc[0])
        md_basis = M.pca_basis(md_all, max(settings["pca_k"], settings["psd_pcs"]))
        for model in settings["models"]:
            net, scales = nets.get(model, (None, None))
            trajs = generate(
                model,
                net,
                scales,
                true[0],
                types,
                min(settings["num_frames"], len(true) - 1),
                settings["window"],
                settings["n_samples"],
                seed=int(job.params.seed) + i,
            )
            samples[f"{model}/{key}"] = trajs.astype(np.float32)
            per_model[model][key] = score_item(trajs, true, md_all, settings, md_basis)
            log.info("%s %s: R_s(last)=%.3f", model, key, per_model[model][key]["r_s"][-1])
    if checks is None:
        raise ValueError(f"no evaluation trajectory longer than {2 * settings['window']} frames for the IWFD checks")
    summary = {m: summarise(per_model[m], settings["rs_report"]) for m in settings["models"]}
    train_name = read_split(Path(job.input.splits) / "atlas_train.csv")[0]
    train_rep = int(meta.loc[meta["name"] == train_name, "replicate"].min())
    synth = synthetic_checks(
        load_ca(processed, train_name, train_rep)[0].astype(np.float64),
        settings["window"],
        settings["synthetic_frames"],
        3,
        settings["num_frames"],
        int(job.params.seed),
    )
    metrics = {
        "scale": scale,
        "s_report": settings["rs_report"],
        "items": [list(i[:2]) for i in items],
        "summary": summary,
        "per_item": per_model,
        "heldout_loss": learning,
        "iwfd_checks": checks,
        "synthetic": synth,
        "labels": {m: MODELS[m].label for m in settings["models"]},
        "paper": {k: v["value"] for k, v in reported.items()},
        "reported": {k: reported[k]["value"] for k in FULL_SCALE},
        "ours_definitions": ["pca_psd_logcorr", "cfre"],
    }
    write_json(job.output.metrics, metrics)
    with atomic_path(job.output.samples) as tmp:
        with open(tmp, "wb") as handle:
            np.savez_compressed(handle, **samples)
    write_claims(job.output.claims, PAPER, evaluate_claims(CLAIMS, metrics, scale, reported))
