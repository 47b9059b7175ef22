"""Rule entry ``biodynaspec_train``: fit one model on the training proteins' training replicates.

Windows slide over every anchor position of each training replicate; a batch holds
windows of one protein (no padding), cropped to ``crop`` contiguous residues as in MDGen.
Seeded per epoch, checkpointed and resumable through :func:`repro.learning.training.train`: batches come from
``default_rng([seed, epoch])`` and the diffusion noise from the per-epoch seeded torch generator, so a
resumed run equals an uninterrupted one bit for bit.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import numpy as np
import torch

from repro.data.atlas.splits import read_split
from repro.learning.training import fingerprint_of, save_checkpoint, seed_everything, train
from repro.papers.biodynaspec.data import read_meta, slot_scales, to_slots, training_windows
from repro.papers.biodynaspec.registry import MODELS, build_network
from repro.workflow.device import pick_device
from repro.workflow.io import InputError

log = logging.getLogger(__name__)


def make_batches(sets, slots, settings: dict, seed: int):
    """``batches(epoch)``: a deterministic list of (anchor, types, slots) tensors per epoch."""
    weights = np.array([len(s.anchors) for s in sets], float)
    weights /= weights.sum()

    def batches(epoch: int):
        rng = np.random.default_rng([seed, epoch])
        out = []
        for _ in range(settings["batches_per_epoch"]):
            k = rng.choice(len(sets), p=weights)
            idx = rng.choice(len(sets[k].anchors), size=settings["batch_size"])
            n_res = len(sets[k].types)
            start = rng.integers(0, n_res - settings["crop"] + 1) if n_res > settings["crop"] else 0
            res = slice(start, start + settings["crop"])
            out.append(
                (
                    torch.as_tensor(sets[k].anchors[idx][:, res], dtype=torch.float32),
                    torch.as_tensor(np.repeat(sets[k].types[None, res], len(idx), 0)),
                    torch.as_tensor(slots[k][idx][:, :, res], dtype=torch.float32),
                )
            )
        return out

    return batches


def main(job) -> None:
    """Train every model of ``params.models`` (one, or all the learned ones) on the same training windows."""
    settings = job.params.settings
    meta = read_meta(job.input.meta)
    names = read_split(Path(job.input.splits) / "atlas_train.csv")
    sets = training_windows(Path(job.input.processed), meta, names, settings["train_replicates"], settings["window"])
    if not sets:
        raise InputError(
            job.input.meta,
            f"no training windows of {settings['window']} frames in replicates "
            f"{settings['train_replicates']} of {names}",
        )
    for name in job.params.models:
        train_model(job, name, sets)


def train_model(job, name: str, sets: list) -> None:
    """One model, seeded afresh, so it comes out the same whether or not it shares its job."""
    settings = job.params.settings
    spec = MODELS[name]
    seed = int(job.params.seed)
    seed_everything(seed)
    raw = [to_slots(s.deltas, spec.representation) for s in sets]
    scales = slot_scales(np.concatenate(raw))
    slots = [r / scales[None, :, None, None] for r in raw]
    log.info(
        "%s: %d windows from %d protein(s), slot scales %s",
        name,
        sum(len(s.anchors) for s in sets),
        len(sets),
        np.round(scales, 3),
    )
    # The checkpoint is keyed by settings, seed, code and the data's metadata, so a rerun after any of
    # them changed starts afresh instead of resuming weights fitted to something else.
    data_key = hashlib.sha256(Path(job.input.meta).read_bytes()).hexdigest()
    checkpoint = Path(job.params.checkpoints) / f"{name}.pt"
    model = build_network(name, settings)
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings["lr"])
    result = train(
        model,
        lambda m, b: m.loss(*b),
        make_batches(sets, slots, settings, seed),
        epochs=settings["epochs"],
        optimizer=optimizer,
        checkpoint=checkpoint,
        checkpoint_every=max(1, settings["epochs"] // 4),
        grad_clip=1.0,
        fingerprint=fingerprint_of([settings, name, seed, data_key], job.input.code),
        desc=f"biodynaspec {name}",
        seed=seed,
        device=pick_device(job.params.device),
    )
    model.cpu()
    save_checkpoint(
        getattr(job.output, f"model_{name}"),
        # tensors and plain data only: evaluate loads it with weights_only=True
        {
            "model": name,
            "state": model.state_dict(),
            "scales": torch.as_tensor(np.asarray(scales, dtype=np.float64)),
            "history": result.history,
            "settings": settings,
        },
    )
    checkpoint.unlink(missing_ok=True)
