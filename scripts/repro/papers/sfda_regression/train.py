"""Stage: for every transfer and seed, train the source model, then adapt it with every method.

Writes, per (transfer, method, seed), the target-test predictions (normalised units) and features, and for the
DDG variants the last epoch's instance histograms, refined pseudo-labels and weights on the adaptation set.
Each source training and adaptation is a checkpointed run of the shared loop (resumable).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import numpy as np
import torch

from repro.learning.smallnets import MLP
from repro.learning.training import fingerprint_of
from repro.papers.sfda_regression.adapt import adapt, feature_statistics, train_source
from repro.papers.sfda_regression.model import Regressor
from repro.papers.sfda_regression.tasks import build_benchmark_pair, build_pair, same_domain
from repro.workflow.io import write_json, write_npz

log = logging.getLogger(__name__)


def make_model(in_dim: int, s: dict, seed: int) -> Regressor:
    """The regressor: an MLP feature extractor (its last hidden layer is g(x)) with the two heads."""
    torch.manual_seed(seed)
    hidden = s["hidden"]
    extractor = MLP(in_dim, hidden[:-1], hidden[-1])
    features = torch.nn.Sequential(extractor, torch.nn.ReLU())
    return Regressor(features, hidden[-1], s["adapt"]["bins"])


def main(job) -> None:
    s = job.params.settings
    torch.set_num_threads(max(1, int(job.threads)))
    ckpt = Path(job.params.checkpoints)
    ckpt.mkdir(parents=True, exist_ok=True)
    fingerprint = fingerprint_of({"settings": s}, getattr(job.input, "code", []))
    arrays, meta = {}, {"transfers": {}, "methods": s["methods"], "seeds": s["seeds"]}
    cfg = s["adapt"]
    for name, transfer in s["transfers"].items():
        if "dataset" in transfer:
            pair, record = build_benchmark_pair(s, transfer, s["data_seed"])
            meta.setdefault("readers", {})[name] = record
        else:
            pair = build_pair(job.input.images, s["source"], transfer, tuple(s["angles"]), s["data_seed"])
        xs, ys = torch.as_tensor(pair.x_source), torch.as_tensor(pair.y_source)
        xt, yt = torch.as_tensor(pair.x_target), torch.as_tensor(pair.y_target)
        xe = torch.as_tensor(pair.x_test)
        meta["transfers"][name] = transfer | {"low": pair.low, "span": pair.span}
        arrays[f"{name}/y_test"] = pair.y_test
        arrays[f"{name}/y_target"] = pair.y_target
        arrays[f"{name}/y_source_mean"] = np.float32(pair.y_source.mean())
        methods = ["source_only", "ddg"] if same_domain(transfer) else s["methods"]
        for seed in s["seeds"]:
            model = make_model(xs.shape[1], s, seed)
            tag = f"{name}_{seed}"
            train_source(model, xs, ys, cfg, seed, ckpt / f"{tag}_source.pt", fingerprint)
            stats = feature_statistics(model, xs)
            for method in methods:
                adapted, diag = adapt(
                    model,
                    method,
                    xt,
                    cfg,
                    seed,
                    stats,
                    yt,
                    ckpt / f"{tag}_{method}.pt",
                    fingerprint_of({"fp": fingerprint, "run": tag, "method": method}),
                )
                with torch.no_grad():
                    pred, _, z = adapted(xe)
                key = f"{name}/{method}/{seed}"
                arrays[f"{key}/pred"], arrays[f"{key}/features"] = pred.numpy(), z.numpy()
                if diag.histograms is not None:
                    arrays[f"{key}/histograms"] = diag.histograms.numpy()
                    arrays[f"{key}/labels"] = diag.labels.numpy()
                    arrays[f"{key}/weights"] = diag.weights.numpy()
                log.info(
                    "%s %s seed %d: target MAE %.4f",
                    name,
                    method,
                    seed,
                    float(np.mean(np.abs(pred.numpy() - pair.y_test))),
                )
    write_npz(job.output.runs, arrays)
    write_json(job.output.meta, meta)
    shutil.rmtree(ckpt, ignore_errors=True)
