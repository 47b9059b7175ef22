"""Stage: train one model family (Geo-NeW or the regression baseline) on the training meshes, every seed.

Loss: the squared mass-weighted relative L2 error of u against the reference solution (Geo-NeW: of the
fine field reconstructed from its coarse Newton solve, with implicit-function-theorem gradients). Weights
of every seed go into one file; a killed run resumes from per-seed checkpoints.
"""

from __future__ import annotations

from pathlib import Path

import torch

from repro.learning.training import epoch_rng, fingerprint_of, train
from repro.papers.geo_newf.model import GeoNeW, MeshBatch, Regression, make_batch, relative_l2
from repro.papers.geo_newf.store import read_split
from repro.workflow.io import atomic_path

MODELS = ("geonew", "regression")


def build(name: str, cfg: dict) -> torch.nn.Module:
    if name == "geonew":
        return GeoNeW(
            cfg["width"],
            cfg["heads"],
            cfg["layers"],
            cfg["coarse"],
            cfg["ridges"],
            cfg["eps"],
            cfg["tol"],
            cfg["max_iter"],
        )
    if name == "regression":
        return Regression(cfg["width"], cfg["heads"], cfg["layers"])
    raise ValueError(f"unknown model {name!r}; have {MODELS}")


def predict(model: torch.nn.Module, batch: MeshBatch) -> torch.Tensor:
    out = model(batch)
    return out.u if isinstance(model, GeoNeW) else out


def loss_fn(model: torch.nn.Module, batch: MeshBatch) -> torch.Tensor:
    return relative_l2(predict(model, batch), batch.u, batch.mass).pow(2).mean()


def fit(name: str, data: MeshBatch, settings: dict, seed: int, checkpoint: Path | None = None, code=()) -> dict:
    """Train one seed; returns its state dict and history."""
    torch.manual_seed(seed)
    model = build(name, settings["model"][name])
    cfg = settings["train"][name]
    size = len(data.u)

    def batches(epoch: int):
        order = epoch_rng(seed, epoch).permutation(size)
        return [data.subset(order[i : i + cfg["batch"]]) for i in range(0, size, cfg["batch"])]

    result = train(
        model,
        loss_fn,
        batches,
        epochs=int(cfg["epochs"]),
        optimizer=torch.optim.Adam(model.parameters(), lr=float(cfg["lr"])),
        checkpoint=checkpoint,
        checkpoint_every=int(cfg["checkpoint_every"]),
        grad_clip=float(cfg["grad_clip"]),
        fingerprint=fingerprint_of({"name": name, "settings": settings, "seed": seed}, code),
        desc=f"geo-newf {name} seed {seed}",
        seed=seed,
    )
    return {"state": model.state_dict(), "history": result.history}


def main(job) -> None:
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(job.threads)
    settings = job.params.settings
    name = job.wildcards.model
    data = make_batch(read_split(job.input.meshes, "train"))
    out_path = Path(job.output.weights)
    checkpoints = {int(seed): out_path.parent / f".{name}_seed{int(seed)}.ckpt" for seed in settings["seeds"]}
    code = list(map(str, job.input.code))
    runs = {seed: fit(name, data, settings, seed, ckpt, code) for seed, ckpt in checkpoints.items()}
    with atomic_path(out_path) as tmp:
        torch.save({"model": name, "runs": runs}, tmp)
    for ckpt in checkpoints.values():
        ckpt.unlink(missing_ok=True)
