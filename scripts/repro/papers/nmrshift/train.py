"""Stage ``nmrshift_train``: (nucleus, variant) runs, each trained and predicted on every CV fold.

Batch objective (brief §3): L = (1/N1) sum L_atom + lambda (1/N2) sum L_mol over a labelled
half-batch (B1 molecules) and an unlabelled half-batch (B2 spectra); shifts are standardised
with the labelled training scaler so both terms live in one space. Variants switch the pieces:
supervised (no unlabelled data), semi (sorting set loss), semi_hungarian (optimal assignment),
weak_only (no labels), the solvent strategies, and the HOSE-like lookup (``method: hose``). Labels are scarce on purpose: each fold
trains on ``n_labelled`` labelled molecules drawn from the non-test folds.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from repro.data.spectra.solvents import GROUP_IDS
from repro.learning.training import fingerprint_of, seed_everything, train
from repro.papers.nmrshift.hose import EnvironmentLookup
from repro.papers.nmrshift.losses import SET_LOSSES
from repro.papers.nmrshift.model import build_model
from repro.papers.nmrshift.records import RecordSet, load_records
from repro.workflow.device import pick_device
from repro.workflow.io import atomic_path

log = logging.getLogger(__name__)


def fold_data(
    labelled: RecordSet, unlabelled: RecordSet, fold: int, settings: dict[str, Any], variant: dict[str, Any], seed: int
) -> dict[str, RecordSet]:
    """Train/test record sets of one fold: scarce labels, a fraction of the unlabelled training spectra."""
    rng = np.random.default_rng([seed, fold])
    lab_train = np.flatnonzero(labelled.frame["fold"].to_numpy() != fold)
    lab_train = np.sort(rng.permutation(lab_train)[: settings["n_labelled"]])
    unl_train = np.flatnonzero(unlabelled.frame["fold"].to_numpy() != fold)
    unl_train = np.sort(rng.permutation(unl_train)[: int(round(variant["unlabelled_fraction"] * unl_train.size))])
    return {
        "labelled_train": labelled.subset(lab_train),
        "unlabelled_train": unlabelled.subset(unl_train),
        "labelled_test": labelled.subset(np.flatnonzero(labelled.frame["fold"].to_numpy() == fold)),
        "unlabelled_test": unlabelled.subset(np.flatnonzero(unlabelled.frame["fold"].to_numpy() == fold)),
    }


def lr_factor(step: int, total: int, warmup: float) -> float:
    """Linear warm-up then polynomial (power 1) decay to zero, as in the paper's Uni-Core runs."""
    warm = max(1, int(round(warmup * total)))
    return (step + 1) / warm if step < warm else max(0.0, (total - step) / max(1, total - warm))


def _to(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    return {k: v.to(device) for k, v in batch.items()}


def fit(
    data: dict[str, RecordSet],
    settings: dict[str, Any],
    variant: dict[str, Any],
    seed: int,
    checkpoint: Path,
    device: torch.device,
    fingerprint: str = "",
) -> tuple[torch.nn.Module, tuple[float, float]]:
    """Train one model on one fold; returns it with the standardisation (mean, sd) of the labelled targets."""
    seed_everything(seed)
    opt_cfg = settings["train"]
    values = data["labelled_train"].target[data["labelled_train"].mask]
    scale = (float(values.mean()), float(values.std()) or 1.0)
    model = build_model(settings["model"], variant["solvent"]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=opt_cfg["lr"], betas=(0.9, 0.99), eps=1e-6)
    use_labels = variant["labelled"]
    use_sets = variant["unlabelled_fraction"] > 0 and len(data["unlabelled_train"]) > 0
    set_loss = SET_LOSSES[variant["matching"]]
    steps, epochs = opt_cfg["steps_per_epoch"], opt_cfg["epochs"]
    b1, b2 = opt_cfg["batch_labelled"], opt_cfg["batch_unlabelled"]

    def batches(epoch: int) -> Iterator[dict[str, Any]]:
        rng = np.random.default_rng([seed, epoch])
        for step in range(steps):
            for group in optimizer.param_groups:
                group["lr"] = opt_cfg["lr"] * lr_factor(epoch * steps + step, epochs * steps, opt_cfg["warmup"])
            batch = {}
            if use_labels:
                batch["lab"] = _to(
                    data["labelled_train"].batch(rng.choice(len(data["labelled_train"]), b1), scale), device
                )
            if use_sets:
                batch["unl"] = _to(
                    data["unlabelled_train"].batch(rng.choice(len(data["unlabelled_train"]), b2), scale), device
                )
            yield batch

    def loss_fn(net: torch.nn.Module, batch: dict[str, Any]) -> torch.Tensor:
        loss = torch.zeros((), device=device)
        if "lab" in batch:
            lab = batch["lab"]
            pred = net(lab["atoms"], lab["coords"], lab["solvent"], lab.get("features"))
            loss = loss + (pred - lab["target"]).abs()[lab["mask"]].sum() / lab["mask"].sum()
        if "unl" in batch:
            unl = batch["unl"]
            pred = net(unl["atoms"], unl["coords"], unl["solvent"], unl.get("features"))
            per_mol = set_loss(pred, unl["mask"], unl["observed"], unl["n_observed"], "l1")
            loss = loss + opt_cfg["lambda"] * per_mol.sum() / unl["mask"].sum()
        return loss

    train(
        model,
        loss_fn,
        batches,
        epochs=epochs,
        optimizer=optimizer,
        checkpoint=checkpoint,
        checkpoint_every=max(1, epochs // 2),
        grad_clip=opt_cfg["grad_clip"],
        fingerprint=fingerprint,
        desc=checkpoint.stem,
        seed=seed,
    )
    checkpoint.unlink(missing_ok=True)
    return model, scale


@torch.no_grad()
def predict(
    model: torch.nn.Module,
    records: RecordSet,
    scale: tuple[float, float],
    batch_size: int = 64,
    solvent: int | None = None,
) -> list[np.ndarray]:
    """Predicted shifts (ppm) of each record's covered atoms, in atom order; ``solvent`` overrides the recorded group id."""
    device = next(model.parameters()).device
    out = []
    for start in range(0, len(records), batch_size):
        rows = np.arange(start, min(start + batch_size, len(records)))
        batch = _to(records.batch(rows, scale), device)
        if solvent is not None:
            batch["solvent"] = torch.full_like(batch["solvent"], solvent)
        pred = (
            model(batch["atoms"], batch["coords"], batch["solvent"], batch.get("features")).cpu().numpy() * scale[1]
            + scale[0]
        )
        out += [pred[i][batch["mask"][i].cpu().numpy()] for i in range(rows.size)]
    return out


def main(job) -> None:
    """Train and predict every (nucleus, variant) run of this job (``params.runs``: one, or a nucleus's all).

    The records of a nucleus, and their fixed input features, are loaded once for all its runs.
    """
    records: dict[str, tuple[RecordSet, RecordSet]] = {}
    for nucleus, name in job.params.runs:
        if nucleus not in records:
            records[nucleus] = load_nucleus(job, nucleus)
        predict_run(job, nucleus, name, *records[nucleus])


def load_nucleus(job, nucleus: str) -> tuple[RecordSet, RecordSet]:
    """Labelled and unlabelled records of one nucleus, with the backbone's fixed features attached."""
    labelled = load_records(job.input.labelled, nucleus)
    unlabelled = load_records(job.input.unlabelled, nucleus)
    probe = build_model(job.params.settings["model"], "none")
    labelled.attach_features(probe)
    unlabelled.attach_features(probe)
    return labelled, unlabelled


def predict_run(job, nucleus: str, name: str, labelled: RecordSet, unlabelled: RecordSet) -> None:
    """One run: every fold of variant ``name`` trained (or looked up) and predicted, written to its parquet."""
    settings = job.params.settings
    device = pick_device(job.params.device)
    variant = settings["variants"][name]
    # Checkpoints are keyed by the settings and the code that shape them, so a changed config or model
    # never resumes a stale run.
    fingerprint = fingerprint_of([settings, name, nucleus, job.params.seed], job.input.code)
    rows = []
    for fold in variant.get("folds", settings["folds"]):
        data = fold_data(labelled, unlabelled, fold, settings, variant, job.params.seed)
        seed = job.params.seed * 1000 + fold
        # the learning checks' trivial predictor: the mean shift of this fold's labelled training atoms
        train_mean = float(np.mean(data["labelled_train"].target[data["labelled_train"].mask]))
        if variant.get("method", "model") == "hose":
            lookup = EnvironmentLookup(data["labelled_train"])
            predictor = lambda records, solvent=None: lookup.predict(records)  # noqa: E731
        else:
            checkpoint = Path(job.params.checkpoints) / nucleus / name / f"fold{fold}.pt"
            model, scale = fit(data, settings, variant, seed, checkpoint, device, fingerprint)
            predictor = lambda records, solvent=None: predict(model, records, scale, solvent=solvent)  # noqa: E731
        for kind in ("labelled_test", "unlabelled_test"):
            records = data[kind]
            as_solvent = {f"pred_as_{group}": predictor(records, solvent=gid) for group, gid in GROUP_IDS.items()}
            for i, ((_, meta), pred) in enumerate(zip(records.frame.iterrows(), predictor(records))):
                rows.append(
                    {
                        "kind": kind.split("_")[0],
                        "fold": fold,
                        "mol_id": meta["mol_id"],
                        "smiles": meta["smiles"],
                        "solvent_group": meta["solvent_group"],
                        "pred": pred.astype(np.float32),
                        "train_mean": train_mean,
                    }
                    | {k: v[i].astype(np.float32) for k, v in as_solvent.items()}
                )
        log.info(
            "%s %s fold %d: %d labelled, %d unlabelled training records",
            nucleus,
            name,
            fold,
            len(data["labelled_train"]),
            len(data["unlabelled_train"]),
        )
    with atomic_path(getattr(job.output, f"predictions_{nucleus}_{name}")) as tmp:
        pd.DataFrame(rows).assign(nucleus=nucleus, variant=name).to_parquet(tmp, index=False)
