"""Stage: every federated run of SPECIAL's comparison and sweeps, written as accuracy matrices.

Groups of runs share a protocol and train as one vectorised population (repro.papers.special.federated):
``main`` holds every method at the default protocol; each sweep group re-runs SPECIAL at ``main_mu`` with one of
participation N, rounds per task T or local epochs E changed. A finished group is kept in the checkpoint folder
(tied to the settings and code by a fingerprint), so a killed job redoes at most the group it was in, and the
result equals an uninterrupted run's bit for bit (every random draw is a function of seed, task and round).
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import replace
from pathlib import Path

import torch

from repro.learning.smallnets import MLP
from repro.learning.training import fingerprint_of
from repro.papers.special.federated import Population, Protocol, Variant
from repro.papers.special.tasks import load_tasks
from repro.workflow.io import read_npz, write_json, write_npz

log = logging.getLogger(__name__)
SWEPT = {"per_round": "N", "rounds": "T", "local_epochs": "E"}


def main_variants(s: dict) -> list[Variant]:
    """FedAvg, SPECIAL at mu = 0 (must equal FedAvg), SPECIAL at each mu, FedProx, SPECIAL-C and replay."""
    out = [Variant("fedavg", "fedavg"), Variant("special_mu0", "special", mu=0.0, anchor=s["anchor"])]
    out += [Variant(f"special_mu{m:g}", "special", mu=float(m), anchor=s["anchor"]) for m in s["mu"]]
    out += [
        Variant("fedprox", "fedprox", client_mu=s["client_mu"]),
        Variant("special_c", "special_c", client_mu=s["client_mu"]),
        Variant("replay", "replay", replay_per_client=s["replay_per_client"]),
    ]
    return out


def groups(s: dict) -> dict[str, tuple[Protocol, list[Variant]]]:
    """Every population to run: ``main`` and one per swept value (SPECIAL at main_mu)."""
    if s["main_mu"] not in s["mu"]:
        raise ValueError(f"main_mu {s['main_mu']} must be one of mu {s['mu']} (the sweeps' middle point is in main)")
    base = Protocol(**s["protocol"])
    swept = [Variant("special", "special", mu=s["main_mu"], anchor=s["anchor"])]
    out = {"main": (base, main_variants(s))}
    for key, values in s["sweeps"].items():
        for v in values:
            out[f"{key}={v}"] = (replace(base, **{key: int(v)}), swept)
    return out


def initial_parameters(in_dim: int, hidden: list[int], classes: int, seed: int) -> dict[str, torch.Tensor]:
    torch.manual_seed(seed)
    return {k: v.detach().clone() for k, v in MLP(in_dim, hidden, classes).named_parameters()}


def run_group(model, protocol: Protocol, variants: list[Variant], seeds: list[int], tasks, inits) -> dict:
    result = Population(model, protocol, variants, seeds).run(tasks, inits)
    return {"acc": result.acc, "grad_norm": result.grad_norm, "residual": result.residual, "learned": result.learned}


def main(job) -> None:
    s = job.params.settings
    torch.set_num_threads(max(1, int(job.threads)))
    tasks = load_tasks(job.input.images, s["source"], s["domains"], s["data_seed"], tuple(s["image_size"]))
    classes = int(max(int(t.y_train.max()) for t in tasks)) + 1
    in_dim = tasks[0].x_train.shape[1]
    model = MLP(in_dim, s["hidden"], classes)
    inits = {seed: initial_parameters(in_dim, s["hidden"], classes, seed) for seed in s["seeds"]}
    fingerprint = fingerprint_of({"settings": s, "seed": job.params.seed}, getattr(job.input, "code", []))
    ckpt = Path(job.params.checkpoints)
    ckpt.mkdir(parents=True, exist_ok=True)
    arrays, meta = {}, {"domains": list(s["domains"]), "seeds": list(s["seeds"]), "groups": {}}
    for name, (protocol, variants) in groups(s).items():
        done = ckpt / f"{fingerprint[:16]}_{name}.npz"
        if done.exists():
            out = read_npz(done)
        else:
            log.info("group %s: %d runs", name, len(variants) * len(s["seeds"]))
            out = run_group(model, protocol, variants, s["seeds"], tasks, inits)
            write_npz(done, out)
        arrays |= {f"{name}/{k}": v for k, v in out.items()}
        meta["groups"][name] = {"variants": [v.name for v in variants], "protocol": vars(protocol)}
    arrays["test/y"] = torch.cat([t.y_test for t in tasks]).numpy()
    arrays["train/y"] = torch.cat([t.y_train for t in tasks]).numpy()
    write_npz(job.output.runs, arrays)
    write_json(job.output.meta, meta)
    shutil.rmtree(ckpt, ignore_errors=True)
    log.info("wrote %d arrays over %d groups", len(arrays), len(meta["groups"]))
