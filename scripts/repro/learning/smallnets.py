"""Small networks, a task record and one ``fit`` for the digit papers (nmnc, loda, special, ccdb, sfda-regression).

Why shared: five papers train an MLP or a small CNN on arrays that fit in memory, with seeded batch
orders, optional per-sample weights (reweighting methods) and resumable checkpoints; ``fit`` wraps
:func:`repro.learning.training.train` (which owns seeding, checkpoints, early stopping and progress lines) so
that each paper only chooses the model, the loss and the weights.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from repro.learning.training import TrainResult, epoch_rng, fingerprint_of, train

ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {"relu": F.relu, "tanh": torch.tanh}
LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass
class Task:
    """One task (or domain) of a sequence: flattened float32 inputs and their labels, training and test.

    Shared by the continual (loda) and federated continual (special) papers, whose methods see tasks in turn.
    """

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor

    @classmethod
    def from_arrays(cls, x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray) -> Task:
        """Each sample's array flattened to a float32 vector (the MLPs' input)."""

        def flat(x: np.ndarray) -> torch.Tensor:
            return torch.as_tensor(x.reshape(len(x), -1), dtype=torch.float32)

        return cls(flat(x_train), torch.as_tensor(y_train), flat(x_test), torch.as_tensor(y_test))


class MLP(nn.Module):
    """Fully connected network on flattened inputs: ``hidden`` widths, then a linear head to ``out_dim``."""

    def __init__(self, in_dim: int, hidden: Sequence[int], out_dim: int, activation: str = "relu"):
        super().__init__()
        widths = [int(in_dim), *map(int, hidden)]
        self.hidden_layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:]))
        self.head = nn.Linear(widths[-1], int(out_dim))
        self.act = ACTIVATIONS[activation]

    def activations(self, x: torch.Tensor) -> list[torch.Tensor]:
        """The output of every hidden layer (after the nonlinearity), first to last."""
        h, out = x.flatten(1), []
        for layer in self.hidden_layers:
            h = self.act(layer(h))
            out.append(h)
        return out

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The last hidden representation (the input itself when there is no hidden layer)."""
        acts = self.activations(x)
        return acts[-1] if acts else x.flatten(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


class SmallCNN(nn.Module):
    """Two 3x3 conv blocks (``width`` and 2 ``width`` channels, ReLU, 2x2 max-pool), global average pool, linear.

    Accepts (N, H, W) grey images when ``in_channels`` is 1; works for any H, W >= 4 (8x8 to 28x28 digits).
    """

    def __init__(self, in_channels: int, n_out: int, width: int = 16):
        super().__init__()
        self.in_channels = int(in_channels)
        self.conv1 = nn.Conv2d(self.in_channels, width, 3, padding=1)
        self.conv2 = nn.Conv2d(width, 2 * width, 3, padding=1)
        self.head = nn.Linear(2 * width, int(n_out))

    def features(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim == 3:
            x = x.unsqueeze(1)
        h = F.max_pool2d(F.relu(self.conv1(x)), 2)
        h = F.max_pool2d(F.relu(self.conv2(h)), 2)
        return h.mean(dim=(2, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def per_sample_loss(loss: str | LossFn) -> LossFn:
    """The per-sample loss (a vector over the batch): "ce" (logits vs int labels), "mse", "l1", or a callable."""
    if callable(loss):
        return loss
    if loss == "ce":
        return lambda out, y: F.cross_entropy(out, y, reduction="none")
    if loss in ("mse", "l1"):
        fn = F.mse_loss if loss == "mse" else F.l1_loss

        def regression(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            if out.numel() != y.numel():
                raise ValueError(f"{loss}: outputs {tuple(out.shape)} and targets {tuple(y.shape)} differ in size")
            out = out.reshape(y.shape)
            return fn(out, y, reduction="none").reshape(len(y), -1).mean(dim=1)

        return regression
    raise ValueError(f"unknown loss {loss!r}: use 'ce', 'mse', 'l1' or a callable")


def _tensor(values: np.ndarray | torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:
    out = torch.as_tensor(np.asarray(values) if not isinstance(values, torch.Tensor) else values)
    return out.to(dtype) if dtype is not None else out


def _target(y: np.ndarray | torch.Tensor, loss: str | LossFn) -> torch.Tensor:
    """Class labels as int64 for "ce"; float32 targets for "mse"/"l1"; a callable loss gets integer labels as
    int64 and anything else as float32."""
    if loss == "ce":
        return _tensor(y, torch.long)
    t = _tensor(y)
    return t.long() if callable(loss) and not torch.is_floating_point(t) else t.float()


@torch.no_grad()
def predict(model: nn.Module, x: np.ndarray | torch.Tensor, batch_size: int = 1024) -> np.ndarray:
    """Model outputs on ``x`` in eval mode, batch by batch, as a float numpy array (on the model's device)."""
    model.eval()
    device = next(model.parameters()).device
    x = _tensor(x, torch.float32)
    outs = [model(x[i : i + batch_size].to(device)).cpu() for i in range(0, len(x), batch_size)]
    return torch.cat(outs).numpy() if outs else np.empty((0,), dtype=np.float32)


def fit(
    model: nn.Module,
    x: np.ndarray | torch.Tensor,
    y: np.ndarray | torch.Tensor,
    *,
    loss: str | LossFn,
    epochs: int,
    batch_size: int,
    lr: float,
    seed: int,
    weights: np.ndarray | None = None,
    checkpoint: str | os.PathLike | None = None,
    optimizer: str = "adam",
    weight_decay: float = 0.0,
    momentum: float = 0.0,
    val: tuple[np.ndarray, np.ndarray] | None = None,
    validate: Callable[[nn.Module], float] | None = None,
    patience: int | None = None,
    grad_clip: float | None = None,
    fingerprint: str = "",
    device: torch.device | str | None = None,
    desc: str = "fit",
    checkpoint_every: int = 50,
) -> TrainResult:
    """Train ``model`` on (x, y) with minibatches in a seeded order per epoch (via repro.learning.training.train).

    ``weights`` (one non-negative number per sample, e.g. a reweighting method's) scale each sample's
    loss; they are normalised to mean 1 over the data, so the batch loss is the weighted empirical risk
    and the learning rate means the same with or without them. ``val`` (x, y) selects the weights of the
    epoch with the lowest unweighted validation loss (``validate`` replaces it with any lower-is-better
    score); without either the last epoch's weights are kept (``patience`` then watches the training loss). ``checkpoint`` makes the run resumable:
    a run resumed after an interruption ends with the same weights as an uninterrupted one.
    """
    per_sample = per_sample_loss(loss)
    xt, yt = _tensor(x, torch.float32), _target(y, loss)
    n = len(xt)
    if weights is None:
        wt = torch.ones(n, dtype=torch.float32)
    else:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(f"weights must be {n} finite non-negative numbers with a positive sum")
        wt = torch.as_tensor(w / w.mean(), dtype=torch.float32)

    def batches(epoch: int):
        order = torch.as_tensor(epoch_rng(seed, epoch).permutation(n))
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            yield xt[idx], yt[idx], wt[idx]

    def objective(net: nn.Module, batch) -> torch.Tensor:
        xb, yb, wb = batch
        return (per_sample(net(xb), yb) * wb).mean()

    if validate is None and val is not None:
        xv, yv = _tensor(val[0], torch.float32), _target(val[1], loss)

        def validate(net: nn.Module) -> float:
            dev = next(net.parameters()).device
            total = sum(
                float(per_sample(net(xv[i : i + 1024].to(dev)), yv[i : i + 1024].to(dev)).sum())
                for i in range(0, len(xv), 1024)
            )
            return total / max(len(xv), 1)

    params = [p for p in model.parameters() if p.requires_grad]
    if optimizer == "adam":
        opt = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    elif optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
    else:
        raise ValueError(f"unknown optimizer {optimizer!r}: use 'adam' or 'sgd'")
    settings = {
        "user": fingerprint,
        "model": repr(model),
        "n": n,
        "epochs": epochs,
        "batch_size": batch_size,
        "lr": lr,
        "seed": seed,
        "optimizer": [optimizer, weight_decay, momentum],
        "loss": loss if isinstance(loss, str) else getattr(loss, "__qualname__", "callable"),
        "weighted": weights is not None,
    }
    return train(
        model,
        objective,
        batches,
        epochs=epochs,
        optimizer=opt,
        validate=validate,
        patience=patience,
        checkpoint=checkpoint,
        checkpoint_every=checkpoint_every,
        grad_clip=grad_clip,
        fingerprint=fingerprint_of(settings),
        desc=desc,
        seed=seed,
        device=device,
        keep_last=validate is None,
    )
