"""Rule entry ``mosaic_train``: train one variant on the canonical store.

Variants: ``mosaic`` (block-sparse attention, noise-gated FFN, fair CRPS over ``members``, one token per grid
point), ``dense`` (the same with dense attention), ``mse`` (the same backbone, no noise, MSE loss) and
``compressive`` (Mosaic-C, the paper's aliasing ablation: the same CRPS model encoding
``compressive_patch`` x ``compressive_patch`` grid points into one token of a coarser latent grid, decoded back by
interpolation).
Loss = area-weighted mean over grid points and channels; ``rollout`` > 1 adds autoregressive steps.
Batch order comes from ``epoch_rng(seed, epoch)`` and every epoch is seeded from (seed, epoch), so a
run resumed from its checkpoint equals an uninterrupted one bit for bit.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import torch

from repro.learning.training import epoch_rng, fingerprint_of, seed_everything, train
from repro.papers.mosaic.data import PeriodStates
from repro.papers.mosaic.metrics import latitude_weights
from repro.papers.mosaic.model import ModelSettings, Mosaic
from repro.workflow.device import pick_device
from repro.workflow.io import atomic_path, write_json

log = logging.getLogger(__name__)
VARIANTS = ("mosaic", "dense", "mse", "compressive")
CHECKPOINT_EVERY = 2


def model_settings(settings: dict, variant: str, channels: int) -> ModelSettings:
    m = settings["model"]
    return ModelSettings(
        channels=channels,
        history=2,
        width=m["width"],
        depth=m["depth"],
        heads=m["heads"],
        kv_heads=m["kv_heads"],
        patch=m["compressive_patch"] if variant == "compressive" else m["patch"],
        tile=tuple(m["tile"]),
        local_block=m["local_block"],
        top_k=m["top_k"],
        sparse=variant != "dense",
        noise_dim=0 if variant == "mse" else m["noise_dim"],
        checkpoint=m.get("checkpoint", False),
    )


def fair_crps_loss(members: torch.Tensor, truth: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Fair CRPS of (M, B, C, lat, lon) members against (B, C, lat, lon), area-weighted mean."""
    m = members.shape[0]
    skill = (members - truth).abs().mean(0)
    spread = (members[:, None] - members[None, :]).abs().sum((0, 1)) / (2 * m * (m - 1))
    return ((skill - spread) * weights).mean()


class DeviceStates:
    """``states[index]`` as a float32 tensor on ``device``, read from the store per batch (PeriodStates)."""

    def __init__(self, period: PeriodStates, device: torch.device):
        self.period, self.device = period, device

    def __len__(self) -> int:
        return len(self.period)

    def __getitem__(self, index: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(self.period[index]).to(self.device)


def windows(n_time: int, steps: int) -> np.ndarray:
    """Start indices t such that states t, t+1 are inputs and t+2 .. t+1+steps are targets."""
    return np.arange(n_time - 1 - steps)


def rollout_loss(
    model,
    states: torch.Tensor,
    starts: np.ndarray,
    steps: int,
    members: int,
    variant: str,
    weights: torch.Tensor,
    noise_dim: int,
) -> torch.Tensor:
    history = torch.stack([states[starts], states[starts + 1]], dim=1)
    b = history.shape[0]
    copies = members if variant != "mse" else 1
    history = history.repeat(copies, 1, 1, 1, 1)
    total = 0.0
    for step in range(steps):
        z = torch.randn(b * copies, noise_dim, device=history.device) if variant != "mse" else None
        pred = model(history, z)
        truth = states[starts + 2 + step]
        if variant == "mse":
            total = total + (((pred - truth) ** 2) * weights).mean()
        else:
            total = total + fair_crps_loss(pred.view(copies, b, *pred.shape[1:]), truth, weights)
        history = torch.stack([history[:, 1], pred], dim=1)
    return total / steps


def main(job) -> None:
    s = job.params.settings
    variant = job.wildcards.variant
    t = s["train"]
    seed_everything(job.params.seed)
    device = pick_device(job.params.device)
    train_f = PeriodStates(job.input.store, job.input.norm_stats, tuple(s["splits"]["train"]))
    val_f = PeriodStates(job.input.store, job.input.norm_stats, tuple(s["splits"]["val"]))
    ms = model_settings(s, variant, len(train_f.channels))
    model = Mosaic(ms, train_f.latitude, train_f.longitude).to(device)
    weights = torch.tensor(latitude_weights(train_f.latitude), dtype=torch.float32, device=device)[:, None]
    train_states, val_states = DeviceStates(train_f, device), DeviceStates(val_f, device)
    steps = t["rollout"]
    starts = windows(len(train_states), steps)

    def batches(epoch: int):
        order = epoch_rng(job.params.seed, epoch).permutation(starts)
        for i in range(0, len(order) - t["batch_size"] + 1, t["batch_size"]):
            yield order[i : i + t["batch_size"]]

    def loss_fn(net, batch):
        return rollout_loss(net, train_states, batch, steps, t["members"], variant, weights, ms.noise_dim)

    val_starts = windows(len(val_states), steps)

    val_batch = t.get("val_batch_size") or len(val_starts)

    def validate(net):
        generator_state = torch.get_rng_state()
        torch.manual_seed(job.params.seed + 1)
        # the windows' mean loss, ``val_batch`` windows per forward pass (one pass where it is unset)
        chunks = [val_starts[i : i + val_batch] for i in range(0, len(val_starts), val_batch)]
        losses = [
            float(rollout_loss(net, val_states, c, steps, t["members"], variant, weights, ms.noise_dim)) for c in chunks
        ]
        torch.set_rng_state(generator_state)
        return losses[0] if len(chunks) == 1 else sum(x * len(c) for x, c in zip(losses, chunks)) / len(val_starts)

    optimizer = torch.optim.AdamW(model.parameters(), lr=t["lr"], weight_decay=t["weight_decay"])
    checkpoint = Path(job.params.checkpoints) / f"{variant}.pt"
    result = train(
        model,
        loss_fn,
        batches,
        epochs=t["epochs"],
        optimizer=optimizer,
        validate=validate,
        patience=t["patience"],
        checkpoint=checkpoint,
        checkpoint_every=CHECKPOINT_EVERY,
        grad_clip=1.0,
        fingerprint=fingerprint_of([s, variant, job.params.seed], job.input.code),
        desc=f"mosaic/{variant}",
        seed=job.params.seed,
        device=device,
        precision=t.get("precision", "fp32"),
    )
    log.info("%s: best epoch %d, val %.4f", variant, result.best_epoch, result.best_score)
    with atomic_path(job.output.model) as tmp:
        # tensors and plain data only: forecast.load_model reads it back with weights_only=True
        torch.save(
            {
                "state": model.state_dict(),
                "settings": {k: list(v) if isinstance(v, tuple) else v for k, v in ms.__dict__.items()},
                "variant": variant,
                "channels": list(train_f.channels),
                "history": result.history,
            },
            tmp,
        )
    write_json(job.output.history, result.history)
    checkpoint.unlink(missing_ok=True)
