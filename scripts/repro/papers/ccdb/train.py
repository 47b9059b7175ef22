"""Stage ``ccdb_train`` (one job per seed, wildcard ``seed``): every method at every bias ratio for that seed;
test predictions, training weights and the score table (recomputed by the evaluate stage from the
predictions)."""

from __future__ import annotations

import logging

import numpy as np
from threadpoolctl import threadpool_limits

from repro.learning.smallnets import predict
from repro.papers.ccdb.data import ratio_key
from repro.papers.ccdb.methods import METHODS
from repro.papers.ccdb.scoring import scores, weight_shares
from repro.workflow.device import pick_device
from repro.workflow.io import read_npz, write_json, write_npz

log = logging.getLogger(__name__)


def split(arrays: dict, rkey: str, name: str):
    x = arrays[f"{rkey}/{name}/x"]
    return (x.reshape(len(x), -1).astype(np.float32), *(arrays[f"{rkey}/{name}/{f}"] for f in ("y", "bias", "group")))


def main(job) -> None:
    with threadpool_limits(limits=job.threads):
        run_all(job)


def run_all(job) -> None:
    s = job.params.settings
    device = pick_device(job.params.device)
    arrays = read_npz(job.input.coloured)
    table, saved = [], {}
    seed = int(job.wildcards.seed)
    for rho in s["ratios"]:
        rkey = ratio_key(rho)
        x, y, bias, group = split(arrays, rkey, "train")
        xv, yv, _, _ = split(arrays, rkey, "val")
        xt, yt, bt, gt = split(arrays, rkey, "test")
        methods = s["methods"] if rho == s["main_ratio"] else s["other_ratio_methods"]
        for method in methods:
            model, weights = METHODS[method](x, y, s, seed, (xv, yv), group=group, device=device)
            pred = predict(model, xt).argmax(1)
            key = f"{rkey}/{method}/{seed}"
            saved[f"{key}/pred"] = pred
            row = {"ratio": rho, "method": method, "seed": seed, **scores(pred, yt, bt, gt, s["min_group"])}
            if weights is not None:
                saved[f"{key}/weights"] = weights
                row["weights"] = weight_shares(weights, y, bias)
            table.append(row)
            log.info("%s: worst-group %.3f average %.3f", key, row["worst_group"], row["average"])
        saved |= {f"{rkey}/test/y": yt, f"{rkey}/test/bias": bt, f"{rkey}/test/group": gt}
        saved |= {f"{rkey}/train/y": y, f"{rkey}/train/bias": bias}
    write_npz(job.output.predictions, saved)
    write_json(job.output.table, {"rows": table})
