"""Stage: the curation pipeline and its baselines on every scene under every perception-noise seed.

Per (scene, seed) unit: the foundation-model stand-ins (perception.py) give noisy depth and masks; multi-view
fusion (geometry.py) makes the depth consistent; lifting (lifting.py) gives the instances of each method:

- ``single_frame``: per-mask boxes from the noisy depth, 3D NMS across frames (feed-forward baseline)
- ``multiview_raw``: multi-view merging on the noisy depth (no geometry fusion: the DA3-only ablation)
- ``fused``: multi-view merging on the fused depth, no confidence filtering
- ``filtered``: ``fused`` keeping the high confidence tier
- ``verified``: ``filtered`` plus the middle/low-tier instances the verifier accepts (the full pipeline)
- ``oracle``: true depth and masks through the same merging

It writes the instances, template captions of the full pipeline's instances, the QA answers of every method
and the per-frame depth precision/recall/F1 of the noisy and fused depths.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from repro.papers.holi_spatial import lifting, perception, qa
from repro.papers.holi_spatial.boxes import columns
from repro.papers.holi_spatial.geometry import backproject, depth_f1, fuse_depths
from repro.papers.holi_spatial.scannet import SCANNET_CLASSES
from repro.papers.holi_spatial.store import CLASSES, Scene, read_scene, scene_classes, scene_files
from repro.workflow.io import write_json
from repro.workflow.progress import Progress

METHODS = ("single_frame", "multiview_raw", "fused", "filtered", "verified", "oracle")


def depth_scores(scene: Scene, depths: dict[str, np.ndarray], cfg: dict) -> dict[str, dict[str, float]]:
    """Mean over frames of depth precision/recall/F1 at tau against the scene's true surface points."""
    stride, tau, far = cfg["depth_stride"], cfg["depth_tau"], cfg["depth_max"]
    valid = [np.isfinite(d) & (d < far) for d in scene.depth]
    gt = [backproject(d, scene.K, p, v)[::stride] for d, p, v in zip(scene.depth, scene.cam2world, valid, strict=True)]
    tree = cKDTree(np.concatenate(gt))
    out = {}
    for name, depth in depths.items():
        rows = [
            depth_f1(backproject(d, scene.K, p, v)[::stride], g, tree, tau)
            for d, p, v, g in zip(depth, scene.cam2world, valid, gt, strict=True)
        ]
        out[name] = {k: float(np.mean([r[k] for r in rows])) for k in ("precision", "recall", "f1")}
    return out


def label_set(scene: Scene) -> list[str]:
    """The open-vocabulary stand-in's label set: the simulator's classes, or ScanNet's 18 benchmark classes."""
    return list(CLASSES) if set(scene.obj_class) <= set(CLASSES) else list(SCANNET_CLASSES)


def run_unit(scene: Scene, seed: int, s: dict) -> dict:
    """Every method on one scene under one perception-noise seed."""
    rng = np.random.default_rng(seed)
    cfg = s["lifting"]
    noisy = perception.noisy_depth(scene.depth, rng, s["perception"]["depth"])
    masks = perception.noisy_masks(
        scene.instance, scene.obj_id, scene.obj_class, label_set(scene), rng, s["perception"]["masks"]
    )
    fused = fuse_depths(noisy, scene.K, scene.cam2world, s["fusion"])
    args = (scene.K, scene.cam2world, cfg)
    fused_inst = lifting.multiview(masks, fused, *args)
    kept = [i for i in fused_inst if i["tier"] == "high"]
    priors = s["verifier"]["size_priors"]
    verified = list(kept)
    for i in fused_inst:
        i["verdict"] = "high_tier" if i["tier"] == "high" else "rejected"
    for i in sorted((i for i in fused_inst if i["tier"] != "high"), key=lambda i: -i["score"]):
        if lifting.verify(i, priors, s["verifier"], verified):
            verified.append(i)
            i["verdict"] = "admitted"
    oracle = perception.oracle_masks(
        scene.instance, scene.obj_id, scene.obj_class, s["perception"]["masks"]["min_pixels"]
    )
    inst = {
        "single_frame": lifting.single_frame(masks, noisy, *args),
        "multiview_raw": lifting.multiview(masks, noisy, *args),
        "fused": fused_inst,
        "filtered": kept,
        "verified": verified,
        "oracle": lifting.multiview(oracle, scene.depth, *args),
    }
    return {
        "instances": inst,
        "depth": depth_scores(scene, {"noisy": noisy, "fused": fused}, s["metrics"]),
        "masks": {"total": len(masks), "spurious": int(sum(m.source < 0 for m in masks))},
        "captions": [
            qa.caption(i["cls"], np.asarray(i["lo"]), np.asarray(i["hi"]), mean_colour(scene, i), scene.table_top)
            for i in inst["verified"]
        ],
    }


def mean_colour(scene: Scene, inst: dict) -> np.ndarray:
    """Mean colour of the pixels whose true surface point falls inside the instance box (first frames seeing it)."""
    lo, hi = np.asarray(inst["lo"]), np.asarray(inst["hi"])
    for f in range(len(scene.depth)):
        pts = backproject(scene.depth[f], scene.K, scene.cam2world[f], np.ones(scene.depth[f].shape, dtype=bool))
        valid = np.isfinite(scene.depth[f].ravel()) & (scene.depth[f].ravel() > 0)
        inside = np.all((pts >= lo) & (pts <= hi), axis=1)
        if inside.sum() >= 5:
            return scene.rgb[f].reshape(-1, 3)[np.flatnonzero(valid)[inside]].mean(0)
    return np.array([128.0, 128.0, 128.0])


def visible_views(scene: Scene, min_pixels: int) -> list[int]:
    """Frames in which each ground-truth object shows at least ``min_pixels`` pixels."""
    return [int(np.sum([np.sum(seg == oid) >= min_pixels for seg in scene.instance])) for oid in scene.obj_id]


def main(job) -> None:
    s = job.params.settings
    files = scene_files(job.input.scenes)
    questions = qa.load_questions(job.input.qa)
    unknown = sorted({c for path in files for c in scene_classes(path)} - set(s["verifier"]["size_priors"]))
    if unknown:
        raise ValueError(
            f"papers.holi-spatial.verifier.size_priors has no prior for the classes {unknown}: the verifier "
            "would admit none of their boxes (add their sorted extents in metres)"
        )
    units = []
    progress = Progress("holi-spatial curation", total=len(files) * len(s["perception"]["seeds"]), unit="unit")
    for i, path in enumerate(files):
        scene = read_scene(path)
        mine = [q for q in questions if q["scene"] == i]
        for seed in s["perception"]["seeds"]:
            unit = run_unit(scene, int(np.random.SeedSequence([seed, i]).generate_state(1)[0]), s)
            unit["answers"] = {
                m: [qa.answer(q, columns(unit["instances"][m]), scene.cam2world, scene.K) for q in mine]
                for m in METHODS
            }
            unit["answers"]["ground_truth"] = [
                qa.answer(
                    q,
                    {
                        "cls": scene.obj_class,
                        "lo": scene.box_lo.tolist(),
                        "hi": scene.box_hi.tolist(),
                        "score": [1.0] * len(scene.obj_class),
                    },
                    scene.cam2world,
                    scene.K,
                )
                for q in mine
            ]
            unit["gt"] = {
                "cls": scene.obj_class,
                "lo": scene.box_lo.tolist(),
                "hi": scene.box_hi.tolist(),
                "views": visible_views(scene, s["perception"]["masks"]["min_pixels"]),
            }
            units.append({"scene": i, "seed": int(seed)} | unit)
            progress.update(1)
    write_json(job.output.curation, {"methods": list(METHODS), "units": units})
