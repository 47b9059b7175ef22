"""A seeded, resumable training loop shared by every paper.

Why a shared loop: every paper needs the same guarantees (fixed seeds, bitwise-repeatable
CPU runs, a checkpoint that survives a killed Slurm job, progress in the rule's log,
early stopping on a validation score), and writing them once keeps them correct.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import os
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from repro.workflow.device import autocast, to_device
from repro.workflow.io import atomic_path
from repro.workflow.progress import Progress

log = logging.getLogger(__name__)


def seed_everything(seed: int) -> None:
    """Seed Python, numpy and torch, and ask torch for deterministic kernels."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True, warn_only=True)


@dataclass
class TrainResult:
    """What a run produced: the per-epoch history and the epoch(s) whose weights were kept.

    For an ensemble (``validate`` returning one score per member) ``best_epoch``/``best_score``
    are per-member lists.
    """

    history: list[dict[str, float]] = field(default_factory=list)
    best_epoch: int | list[int] = -1
    best_score: float | list[float] = float("inf")
    resumed_from: int | None = None


def _keep_improved(best_state: dict, state: dict, improved: torch.Tensor) -> dict:
    """Copy the members that improved from ``state`` into ``best_state``.

    Ensemble convention: every parameter and buffer has the member dimension first.
    """
    out = {}
    for name, value in state.items():
        if value.ndim == 0 or value.shape[0] != improved.shape[0]:
            raise ValueError(f"ensemble selection: {name} of shape {tuple(value.shape)} lacks the member dimension")
        mask = improved.reshape(-1, *([1] * (value.ndim - 1)))
        out[name] = torch.where(mask, value.detach(), best_state[name]).clone()
    return out


def epoch_seed(seed: int, epoch: int) -> int:
    """A 63-bit seed that is a function of (seed, epoch) only, for everything random inside an epoch."""
    return int(np.random.SeedSequence([int(seed), int(epoch)]).generate_state(2, np.uint64)[0] >> np.uint64(1))


def epoch_rng(seed: int, epoch: int) -> np.random.Generator:
    """The numpy generator for an epoch's batch order: a resumed run draws the same batches."""
    return np.random.default_rng([int(seed), int(epoch)])


def seed_epoch(seed: int, epoch: int) -> None:
    """Seed torch, numpy and Python from (seed, epoch) at the start of an epoch, so dropout, noise and
    any global-RNG draw inside it do not depend on how many epochs ran before in this process."""
    value = epoch_seed(seed, epoch)
    random.seed(value)
    np.random.seed(value % 2**32)
    torch.manual_seed(value)


def _rng_state() -> dict:
    """The three generators' states as tensors and plain numbers, so a checkpoint loads with weights_only."""
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    version, internal, gauss = random.getstate()
    return {
        "torch": torch.get_rng_state(),
        "numpy": {"kind": kind, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
                  "has_gauss": int(has_gauss), "cached": float(cached)},  # fmt: skip
        "python": [int(version), torch.tensor(internal, dtype=torch.int64), gauss],
    }


def _set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    n = state["numpy"]
    np.random.set_state((n["kind"], n["keys"].numpy().astype(np.uint32), n["pos"], n["has_gauss"], n["cached"]))
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(int(v) for v in internal.tolist()), gauss))


def fingerprint_of(settings: object, files: Iterable[str | os.PathLike] = ()) -> str:
    """Digest of JSON-able settings and the bytes of code files, to tie a checkpoint to them."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode())
    for path in sorted(map(str, files)):
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def save_checkpoint(path: str | os.PathLike, payload: dict) -> None:
    """Write a checkpoint atomically so a kill during saving keeps the previous one."""
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


def train(
    model: torch.nn.Module,
    loss_fn: Callable[[torch.nn.Module, object], torch.Tensor],
    batches: Callable[[int], Iterable[object]],
    *,
    epochs: int,
    optimizer: torch.optim.Optimizer,
    validate: Callable[[torch.nn.Module], float] | None = None,
    patience: int | None = None,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: int = 50,
    grad_clip: float | None = None,
    fingerprint: str = "",
    desc: str = "train",
    seed: int | None = None,
    device: torch.device | str | None = None,
    precision: str = "fp32",
    keep_last: bool = False,
) -> TrainResult:
    """Minimise ``loss_fn`` over ``batches(epoch)`` for ``epochs`` epochs.

    ``validate`` (lower is better) selects the weights kept at the end and drives early
    stopping after ``patience`` epochs without improvement. For an ensemble whose parameters all
    carry the member dimension first, ``validate`` may return one score per member: each member
    then keeps its own best weights, and training stops once no member improved for ``patience``
    epochs (members are independent, so this equals training each alone). With ``checkpoint`` set, the
    full state (weights, optimiser, RNGs, history, best weights) is saved every
    ``checkpoint_every`` epochs and a rerun continues from it: a resumed run ends with
    the same weights as an uninterrupted one. A checkpoint whose ``fingerprint`` (a digest of
    the settings and code the caller trains with) differs is ignored, so a changed config
    never resumes stale weights. Callers delete the checkpoint once their output is written.

    With ``seed`` set, every epoch starts by seeding torch, numpy and Python from (seed, epoch)
    (:func:`seed_epoch`), and ``batches(epoch)`` should draw its order from :func:`epoch_rng`: then a
    run resumed from any checkpoint equals an uninterrupted one bit for bit. Progress goes to the log
    at each epoch and at least once a minute within one (loss, validation, steps/s, elapsed, ETA).

    With ``device`` set (from :func:`repro.workflow.device.pick_device`) the model and every tensor of each batch
    are moved there; ``precision="bf16"`` runs ``loss_fn`` under bf16 autocast on CUDA (weights and
    optimiser state stay float32; on the CPU it is ignored, so CPU runs stay bitwise repeatable).

    ``keep_last=True`` ends with the last epoch's weights instead of the best-scoring ones (for methods
    defined by a fixed training budget, e.g. continual-learning tasks trained without a validation set).
    """
    result = TrainResult()
    if device is not None:
        device = torch.device(device)
        model.to(device)
    best_state = copy.deepcopy(model.state_dict())
    start, since_best = 0, 0
    ckpt = Path(checkpoint) if checkpoint else None
    state = None
    if ckpt is not None and ckpt.exists():
        try:
            state = torch.load(ckpt, weights_only=True)  # tensors and plain data only, never arbitrary objects
        except Exception as err:  # a checkpoint of an older format (pickled numpy state) cannot resume safely
            log.info("ignoring checkpoint %s: not loadable with weights_only (%s)", ckpt, type(err).__name__)
    if state is not None and state.get("fingerprint") != fingerprint:
        log.info("ignoring checkpoint %s: it was written for other settings or code", ckpt)
        state = None
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        _set_rng_state(state["rng"])
        result.history, result.best_epoch, result.best_score = (
            state["history"],
            state["best_epoch"],
            state["best_score"],
        )
        best_state, since_best, start = state["best_model"], state["since_best"], state["epoch"] + 1
        result.resumed_from = start
        log.info("resumed from %s at epoch %d", ckpt, start)

    progress = tqdm(range(start, epochs), desc=desc, mininterval=5.0, disable=None)
    epochs_done = Progress(desc, total=epochs, unit="epochs", logger=log, initial=start)
    for epoch in progress:
        if seed is not None:
            seed_epoch(seed, epoch)
        model.train()
        total, count = 0.0, 0
        steps = Progress(f"{desc} epoch {epoch}", unit="steps", logger=log)
        for batch in batches(epoch):
            optimizer.zero_grad(set_to_none=True)
            if device is not None:
                batch = to_device(batch, device)
            with autocast(device or torch.device("cpu"), precision):
                loss = loss_fn(model, batch)
            if not torch.isfinite(loss):
                raise FloatingPointError(f"{desc}: non-finite loss at epoch {epoch}")
            loss.backward()
            if grad_clip is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            optimizer.step()
            total, count = total + float(loss.detach()), count + 1
            steps.update(loss=total / count)
        record = {"epoch": epoch, "loss": total / max(count, 1)}
        score: float | torch.Tensor = record["loss"]
        if validate is not None:
            model.eval()
            with torch.no_grad():
                score = validate(model)
            score = torch.as_tensor(score, dtype=torch.float64).detach()
            record["val"] = float(score.mean())
            if score.ndim == 1:
                record["val_members"] = score.tolist()  # per-member scores of an ensemble, kept for its curves
            if score.ndim == 0:
                score = float(score)
        result.history.append(record)
        if isinstance(score, torch.Tensor):
            if not isinstance(result.best_score, list):
                result.best_score, result.best_epoch = [float("inf")] * len(score), [-1] * len(score)
            improved = score < torch.tensor(result.best_score, dtype=torch.float64)
            if improved.any():
                best_state = _keep_improved(best_state, model.state_dict(), improved)
                for m in torch.nonzero(improved).flatten().tolist():
                    result.best_score[m], result.best_epoch[m] = float(score[m]), epoch
                since_best = 0
            else:
                since_best += 1
        elif score < result.best_score:
            result.best_score, result.best_epoch, since_best = score, epoch, 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            since_best += 1
        progress.set_postfix(loss=f"{record['loss']:.4g}", val=f"{record.get('val', record['loss']):.4g}")
        epochs_done.update(
            force=True,
            loss=record["loss"],
            val=record.get("val", float("nan")),
            steps_per_s=steps.rate(),
        )
        stop = patience is not None and since_best >= patience
        if ckpt is not None and ((epoch + 1) % checkpoint_every == 0 or stop or epoch == epochs - 1):
            save_checkpoint(
                ckpt,
                {
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "rng": _rng_state(),
                    "history": result.history,
                    "best_epoch": result.best_epoch,
                    "best_score": result.best_score,
                    "best_model": best_state,
                    "since_best": since_best,
                    "epoch": epochs - 1 if stop else epoch,
                    "fingerprint": fingerprint,
                },
            )
        if stop:
            log.info("early stop at epoch %d (best %d)", epoch, result.best_epoch)
            break
    if not keep_last:
        model.load_state_dict(best_state)
    model.eval()
    return result
