"""Stage ``ccdb_evaluate``: scores recomputed from the saved test predictions (and compared with the train
stage's table), collected per bias ratio, method and seed, then the claims."""

from __future__ import annotations

import numpy as np

from repro.papers.ccdb.claims import CLAIMS
from repro.papers.ccdb.data import ratio_key
from repro.papers.ccdb.scoring import scores
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import read_json, read_npz, write_json

SCORES = ("average", "worst_group", "unbiased", "conflicting", "aligned")
LEARNED = ("erm", "ccdb", "group_balanced")  # the classifiers the paper claims compare


def learning_errors(arrays: dict, rkey: str, methods: list[str], seeds: list[int]) -> dict:
    """Per test image at bias ratio ``rkey``: each method's 0/1 error (mean over seeds) and the class prior's
    (the most frequent training label predicted for every image)."""
    y = arrays[f"{rkey}/test/y"]
    prior = int(np.argmax(np.bincount(arrays[f"{rkey}/train/y"])))
    out = {"trivial": (y != prior).astype(float).tolist()}
    for method in methods:
        preds = [arrays[f"{rkey}/{method}/{seed}/pred"] for seed in seeds]
        out[method] = np.mean([p != y for p in preds], axis=0).tolist()
    return out


def summarise(table: dict, arrays: dict, s: dict) -> dict:
    by_ratio: dict = {}
    deviation = 0.0
    for row in table["rows"]:
        rkey = ratio_key(row["ratio"])
        pred = arrays[f"{rkey}/{row['method']}/{row['seed']}/pred"]
        again = scores(pred, *(arrays[f"{rkey}/test/{f}"] for f in ("y", "bias", "group")), s["min_group"])
        deviation = max(deviation, *(abs(again[k] - row[k]) for k in SCORES if np.isfinite(row[k])))
        entry = by_ratio.setdefault(rkey, {"ratio": row["ratio"]}).setdefault(row["method"], {k: [] for k in SCORES})
        for k in SCORES:
            entry[k].append(again[k])
        if "weights" in row:
            for k, v in row["weights"].items():
                entry.setdefault(f"weights_{k}", []).append(v)
    main = ratio_key(s["main_ratio"])
    learned = [m for m in LEARNED if m in by_ratio.get(main, {})]
    return {
        "learning": learning_errors(arrays, main, learned, s["seeds"]),
        "main": main,
        "no_bias": ratio_key(s["no_bias_ratio"]),
        "seeds": s["seeds"],
        "ratios": by_ratio,
        "table_deviation": deviation,
    }


def main(job) -> None:
    s = job.params.settings
    rows = [row for path in job.input.tables for row in read_json(path)["rows"]]
    arrays = {k: v for path in job.input.predictions for k, v in read_npz(path).items()}
    metrics = summarise({"rows": rows}, arrays, s)
    write_json(job.output.metrics, metrics)
    write_claims(
        job.output.claims, "ccdb", evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    )
