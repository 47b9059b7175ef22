"""Stage: 3D box AP and precision/recall per method, depth F1, QA accuracy, metrics.json and claims.json."""

from __future__ import annotations

import json

import numpy as np

from repro.papers.holi_spatial.boxes import columns, match, restrict, scene_detection
from repro.papers.holi_spatial.claims import CLAIMS
from repro.papers.holi_spatial.qa import NUMERIC, correct, load_questions
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, write_json


def load_curation(path: str) -> dict:
    try:
        doc = json.loads(open(path).read())
    except (OSError, ValueError) as err:
        raise InputError(path, f"not a curation JSON ({err})") from err
    if not doc.get("units") or "methods" not in doc:
        raise InputError(path, "expected 'methods' and a non-empty 'units' list")
    return doc


def detection(units: list[dict], method: str, thresholds: list[float]) -> dict:
    """Pooled and per-unit AP / precision / recall of one method at each IoU threshold."""
    preds = [columns(u["instances"][method]) for u in units]
    gts = [u["gt"] for u in units]
    out = {}
    for t in thresholds:
        key = f"iou{int(round(t * 100))}"
        per_unit = [scene_detection([p], [g], t) for p, g in zip(preds, gts, strict=True)]
        out[key] = scene_detection(preds, gts, t) | {
            f"{m}_per_unit": [r[m] for r in per_unit] for m in ("ap", "precision", "recall")
        }
    out["boxes_per_unit"] = [len(p["cls"]) for p in preds]
    return out


def verifier_outcomes(units: list[dict], threshold: float) -> dict:
    """The verifier as a classifier of the lower-tier candidates: each fused instance's true-positive flag (at
    ``threshold``, matched within the fused set) by its verdict (high_tier, admitted, rejected), pooled over
    units, and per unit the recall of the filtered and verified sets (for the by-construction checks)."""
    flags: dict[str, list[bool]] = {"high_tier": [], "admitted": [], "rejected": []}
    for u in units:
        fused = u["instances"]["fused"]
        cols = columns(fused)
        order = np.argsort(-np.asarray(cols["score"], dtype=float), kind="stable")
        tp = np.zeros(len(fused), dtype=bool)
        tp[order] = match(cols, u["gt"], threshold)
        for inst, hit in zip(fused, tp, strict=True):
            flags[inst["verdict"]].append(bool(hit))
    return {k: [int(f) for f in v] for k, v in flags.items()}


def multiside(units: list[dict], method: str, min_views: int, threshold: float) -> dict:
    """Pooled detection on the objects seen in at least ``min_views`` frames (the others don't care)."""
    pairs = [
        restrict(columns(u["instances"][method]), u["gt"], np.asarray(u["gt"]["views"]) >= min_views, threshold)
        for u in units
    ]
    return scene_detection([p for p, _ in pairs], [g for _, g in pairs], threshold) | {
        "objects": int(sum(len(g["cls"]) for _, g in pairs))
    }


def qa_scores(units: list[dict], questions: list[dict], methods: list[str], tolerance: float) -> dict:
    """QA accuracy per method: over the object templates (per unit and pooled) and per template."""
    out = {}
    for method in methods:
        per_unit, per_template = [], {}
        for u in units:
            mine = [q for q in questions if q["scene"] == u["scene"]]
            ok = [correct(q, a, tolerance) for q, a in zip(mine, u["answers"][method], strict=True)]
            obj = [o for q, o in zip(mine, ok, strict=True) if not q["template"].startswith("camera_")]
            per_unit.append(float(np.mean(obj)) if obj else float("nan"))
            for q, o in zip(mine, ok, strict=True):
                per_template.setdefault(q["template"], []).append(o)
        out[method] = {
            "object_accuracy": float(np.mean(per_unit)),
            "object_accuracy_per_unit": per_unit,
            "per_template": {t: float(np.mean(v)) for t, v in per_template.items()},
        }
    return out


def summarise(doc: dict, questions: list[dict], s: dict) -> dict:
    units = doc["units"]
    methods = doc["methods"]
    thresholds = s["metrics"]["iou"]
    return {
        "units": [{"scene": u["scene"], "seed": u["seed"]} for u in units],
        "detection": {m: detection(units, m, thresholds) for m in methods},
        "verifier_iou25": verifier_outcomes(units, 0.25),
        "oracle_multiside_iou50": multiside(units, "oracle", s["metrics"]["multiside_views"], 0.5),
        "multiside_views": s["metrics"]["multiside_views"],
        "depth": {
            d: {k: [u["depth"][d][k] for u in units] for k in ("precision", "recall", "f1")} for d in ("noisy", "fused")
        },
        "depth_tau_m": s["metrics"]["depth_tau"],
        "qa": qa_scores(units, questions, [*methods, "ground_truth"], s["qa"]["tolerance"]),
        "qa_numeric_tolerance": s["qa"]["tolerance"],
        "qa_templates": sorted({q["template"] for q in questions}),
        "qa_pairs": len(questions),
        "numeric_templates": list(NUMERIC),
        "masks": {k: int(np.sum([u["masks"][k] for u in units])) for k in ("total", "spurious")},
        "captions": sum(len(u["captions"]) for u in units),
        "caption_examples": units[0]["captions"][:5],
    }


def main(job) -> None:
    s = job.params.settings
    reported = load_reported(job.input.reported)
    metrics = summarise(load_curation(job.input.curation), load_questions(job.input.qa), s)
    metrics["reported"] = {key: entry["value"] for key, entry in reported.items()}  # drawn in the figures
    write_json(job.output.metrics, metrics)
    write_claims(job.output.claims, "holi-spatial", evaluate_claims(CLAIMS, metrics, job.params.scale, reported))
