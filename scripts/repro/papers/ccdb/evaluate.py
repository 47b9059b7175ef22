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
    return {
        "main": ratio_key(s["main_ratio"]),
        "no_bias": ratio_key(s["no_bias_ratio"]),
        "seeds": s["seeds"],
        "ratios": by_ratio,
        "table_deviation": deviation,
    }


def main(job) -> None:
    s = job.params.settings
    metrics = summarise(read_json(job.input.table), read_npz(job.input.predictions), s)
    write_json(job.output.metrics, metrics)
    write_claims(
        job.output.claims, "ccdb", evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    )
