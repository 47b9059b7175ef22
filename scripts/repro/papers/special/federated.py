"""Federated domain-incremental learning: clients, partial participation, local SGD and server aggregation.

A population of federated runs (method variants x seeds) trains at once: the model is called functionally
(``torch.func.vmap`` of the forward pass) on parameters stacked over every (run, sampled client) pair, so a round is a few vectorised
SGD steps instead of a loop over runs and clients. Steps beyond a client's own batches carry zero weight, and
plain SGD (no momentum) leaves that client's parameters unchanged there, so the stacked run equals training
each client alone. Client sampling, batch order and the Dirichlet label skew depend only on (seed, task,
round): every method sees the same clients and the same batches, which makes the comparisons paired.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, vmap

from repro.learning.smallnets import Task

Params = dict[str, torch.Tensor]
METHODS = ("fedavg", "special", "fedprox", "special_c", "replay")


@dataclass(frozen=True)
class Protocol:
    """What every run of a population shares: clients, participation, rounds per task, local epochs, SGD."""

    clients: int = 20
    per_round: int = 5
    rounds: int = 6
    local_epochs: int = 2
    batch_size: int = 32
    lr: float = 0.05
    alpha: float = 0.3

    def __post_init__(self) -> None:
        if not 1 <= self.per_round <= self.clients:
            raise ValueError(f"per_round must lie in [1, clients={self.clients}], got {self.per_round}")


@dataclass(frozen=True)
class Variant:
    """One method: SPECIAL's server weight ``mu`` and anchor, a client proximal weight, a replay buffer size."""

    name: str
    method: str
    mu: float = 0.0
    client_mu: float = 0.0
    anchor: str = "round"
    replay_per_client: int = 0

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"{self.name}: unknown method {self.method!r}; expected one of {METHODS}")
        if self.anchor not in ("round", "task"):
            raise ValueError(f"{self.name}: anchor must be 'round' or 'task', got {self.anchor!r}")
        if self.mu and self.method != "special":
            raise ValueError(f"{self.name}: a server weight mu belongs to method 'special' only")
        if self.client_mu and self.method not in ("fedprox", "special_c"):
            raise ValueError(f"{self.name}: a client weight belongs to 'fedprox' or 'special_c' only")


@dataclass
class PopulationResult:
    """acc[v, s, j, i]: accuracy on task i after task j; grad_norm[v, s, task, round]; residual[v, s]: largest
    relative distance of a SPECIAL server step from its segment [w_bar, anchor]."""

    acc: np.ndarray
    grad_norm: np.ndarray
    residual: np.ndarray
    learned: np.ndarray | None = None  # [v, s, item]: correct on task t's test items right after task t


def dirichlet_partition(labels: np.ndarray, clients: int, alpha: float, rng: np.random.Generator) -> list[np.ndarray]:
    """Indices of each client: every class is spread over the clients with Dirichlet(alpha) shares."""
    parts: list[list[int]] = [[] for _ in range(clients)]
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        shares = rng.dirichlet(np.full(clients, alpha))
        cuts = (np.cumsum(shares)[:-1] * idx.size).astype(int)
        for k, chunk in enumerate(np.split(idx, cuts)):
            parts[k].extend(chunk.tolist())
    return [np.sort(np.asarray(p, dtype=np.int64)) for p in parts]


def server_step(averaged: Params, anchor: Params, mu: torch.Tensor) -> Params:
    """SPECIAL's proximal step argmin_w 1/2||w - w_bar||^2 + mu/2 ||w - anchor||^2 = (w_bar + mu anchor)/(1 + mu),
    for parameters stacked over runs (``mu`` has one entry per run; mu = 0 is FedAvg)."""
    out = {}
    for k, w_bar in averaged.items():
        m = mu.reshape(-1, *([1] * (w_bar.ndim - 1)))
        out[k] = (w_bar + m * anchor[k]) / (1.0 + m)
    return out


def segment_residual(new: Params, averaged: Params, anchor: Params) -> np.ndarray:
    """Per run: distance of ``new`` from the segment [averaged, anchor] relative to the segment's length."""
    a = torch.cat([averaged[k].flatten(1) for k in averaged], 1).double()
    b = torch.cat([anchor[k].flatten(1) for k in averaged], 1).double()
    w = torch.cat([new[k].flatten(1) for k in averaged], 1).double()
    d = b - a
    length = d.norm(dim=1)
    t = torch.clamp(((w - a) * d).sum(1) / length.clamp_min(1e-300) ** 2, 0.0, 1.0)
    dist = (w - (a + t[:, None] * d)).norm(dim=1)
    return torch.where(length > 0, dist / length.clamp_min(1e-300), dist).numpy()


def round_rng(seed: int, task: int, rnd: int) -> np.random.Generator:
    """The generator of one round (client sampling and batch order), shared by every method."""
    return np.random.default_rng([int(seed), int(task), int(rnd)])


def local_batches(sizes: list[int], steps: int, batch_size: int, rng: np.random.Generator) -> list[list[np.ndarray]]:
    """Per client, ``steps`` batches drawn from shuffled passes over its own ``size`` samples (a local epoch is a
    fixed number of steps, the average client's pass, so that every client of a round does the same work)."""
    out = []
    for n in sizes:
        order = np.concatenate([rng.permutation(n) for _ in range(-(-steps * batch_size // n))])
        out.append([order[i * batch_size : (i + 1) * batch_size] for i in range(steps)])
    return out


def stack(params: list[Params]) -> Params:
    return {k: torch.stack([p[k] for p in params]) for k in params[0]}


class Population:
    """Runs every (variant, seed) of one protocol through the same task sequence at once."""

    GRAD_SAMPLES = 256

    def __init__(self, model: torch.nn.Module, protocol: Protocol, variants: list[Variant], seeds: list[int]):
        self.model, self.protocol, self.variants, self.seeds = model, protocol, variants, [int(s) for s in seeds]
        self.members = [(v, s) for v in variants for s in self.seeds]

        self._logits = vmap(lambda p, x: functional_call(model, p, (x,)))

    def _losses(self, params: Params, x, y, w, anchor: Params, prox) -> torch.Tensor:
        """Per row: weighted cross-entropy of its batch plus its proximal term; rows are independent."""
        logits = self._logits(params, x)
        ce = F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none").reshape(y.shape)
        ce = (ce * w).sum(1) / w.sum(1).clamp_min(1.0)
        if bool((prox > 0).any()):
            ce = ce + 0.5 * prox * sum(((params[k] - anchor[k]) ** 2).flatten(1).sum(1) for k in params)
        return ce * (w.sum(1) > 0)

    def _grads(self, params: Params, x, y, w, anchor: Params, prox) -> Params:
        """Per-row gradients: the gradient of the sum of independent row losses, row by row."""
        leaves = {k: v.detach().requires_grad_(True) for k, v in params.items()}
        total = self._losses(leaves, x, y, w, anchor, prox).sum()
        return dict(zip(leaves, torch.autograd.grad(total, list(leaves.values()))))

    def correct(self, params: Params, task: Task) -> np.ndarray:
        """Per run and test item of ``task``: whether the run's global model classifies it right."""
        with torch.no_grad():
            logits = self._logits(params, task.x_test.expand(len(self.members), *task.x_test.shape))
            return (logits.argmax(-1) == task.y_test).numpy()

    def accuracy(self, params: Params, task: Task) -> np.ndarray:
        return self.correct(params, task).mean(1)

    def grad_norm(self, params: Params, task: Task) -> np.ndarray:
        """Per run: norm of the gradient of the global model's loss on the current task (its first
        ``GRAD_SAMPLES`` training samples, a fixed subsample: a diagnostic, not part of training)."""
        x = task.x_train[: self.GRAD_SAMPLES].expand(len(self.members), -1, -1)
        y = task.y_train[: self.GRAD_SAMPLES].expand(len(self.members), -1)
        w = torch.ones(y.shape)
        g = self._grads(params, x, y, w, params, torch.zeros(len(self.members)))
        return torch.sqrt(sum((v.flatten(1) ** 2).sum(1) for v in g.values())).numpy()

    def _round_batches(self, data, seed_rounds, steps: int):
        """Stacked inputs, labels, per-step index and weight of every (run, sampled client) of one round."""
        p = self.protocol
        plans, chosen_all = [], []
        for m, rng in enumerate(seed_rounds):
            chosen = np.sort(rng.choice(p.clients, p.per_round, replace=False))
            sizes = [len(data[m][k][1]) for k in chosen]
            plans.append(local_batches([max(n, 1) for n in sizes], steps, p.batch_size, rng))
            chosen_all.append((chosen, sizes))
        longest_data = max(max(max(s) for _, s in chosen_all), 1)
        rows = len(self.members) * p.per_round
        x0 = next(iter(data[0][0]))
        xs = torch.zeros(rows, longest_data, x0.shape[1])
        ys = torch.zeros(rows, longest_data, dtype=torch.long)
        index = np.zeros((rows, steps, p.batch_size), dtype=np.int64)
        weight = np.zeros((rows, steps, p.batch_size), dtype=np.float32)
        shares = np.zeros((len(self.members), p.per_round), dtype=np.float32)
        for m, ((chosen, sizes), plan) in enumerate(zip(chosen_all, plans)):
            shares[m] = np.asarray(sizes, dtype=np.float32) / max(np.sum(sizes), 1)
            for j, (k, n, batches) in enumerate(zip(chosen, sizes, plan)):
                row = m * p.per_round + j
                xs[row, :n], ys[row, :n] = data[m][k]
                for s, b in enumerate(batches):
                    index[row, s, : b.size] = b
                    weight[row, s, : b.size] = float(n > 0)
        return xs, ys, index, weight, torch.as_tensor(shares)

    def local_train(self, start: Params, anchor: Params, prox: torch.Tensor, xs, ys, index, weight) -> Params:
        """Local SGD of every (run, client) row from its run's ``start``; returns parameters per row."""
        n = self.protocol.per_round
        rep = {k: v.repeat_interleave(n, 0) for k, v in start.items()}
        anchors = {k: v.repeat_interleave(n, 0) for k, v in anchor.items()}
        rows = torch.arange(xs.shape[0])[:, None]
        for s in range(index.shape[1]):
            idx = torch.as_tensor(index[:, s])
            g = self._grads(rep, xs[rows, idx], ys[rows, idx], torch.as_tensor(weight[:, s]), anchors, prox)
            rep = {k: rep[k] - self.protocol.lr * g[k] for k in rep}
        return rep

    def run(self, tasks: list[Task], inits: dict[int, Params]) -> PopulationResult:
        """Train every run on ``tasks`` in order and evaluate all tasks after the last round of each."""
        p = self.protocol
        members = self.members
        params = stack([inits[s] for _, s in members])
        task_anchor = params
        mu = torch.tensor([v.mu for v, _ in members])
        prox = torch.tensor([v.client_mu for v, _ in members]).repeat_interleave(p.per_round)
        acc = np.zeros((len(members), len(tasks), len(tasks)))
        learned = []
        norms = np.zeros((len(members), len(tasks), p.rounds))
        residual = np.zeros(len(members))
        empty = (tasks[0].x_train[:0], tasks[0].y_train[:0])
        buffers = [[empty] * p.clients for _ in members]
        client_anchor_is_task = torch.tensor([v.method == "special_c" for v, _ in members])
        server_anchor_is_task = torch.tensor([v.anchor == "task" for v, _ in members])
        for t, task in enumerate(tasks):
            steps = p.local_epochs * max(1, round(len(task.y_train) / (p.clients * p.batch_size)))
            parts = {
                s: dirichlet_partition(task.y_train.numpy(), p.clients, p.alpha, np.random.default_rng([s, t]))
                for s in self.seeds
            }
            data = [
                [
                    (torch.cat([task.x_train[q], bx]), torch.cat([task.y_train[q], by]))
                    for q, (bx, by) in zip(parts[s], buffers[m])
                ]
                for m, (_, s) in enumerate(members)
            ]
            for r in range(p.rounds):
                rngs = [round_rng(s, t, r) for _, s in members]
                xs, ys, index, weight, shares = self._round_batches(data, rngs, steps)
                c_anchor = _where(client_anchor_is_task, task_anchor, params)
                local = self.local_train(params, c_anchor, prox, xs, ys, index, weight)
                averaged = {
                    k: torch.einsum("mn,mn...->m...", shares, v.reshape(len(members), p.per_round, *v.shape[1:]))
                    for k, v in local.items()
                }
                s_anchor = _where(server_anchor_is_task & (t > 0), task_anchor, params)
                new = server_step(averaged, s_anchor, mu)
                residual = np.maximum(residual, segment_residual(new, averaged, s_anchor))
                params = new
                norms[:, t, r] = self.grad_norm(params, task)
            for i, other in enumerate(tasks):
                hits = self.correct(params, other)
                acc[:, t, i] = hits.mean(1)
                if i == t:
                    learned.append(hits)
            task_anchor = {k: v.clone() for k, v in params.items()}
            for m, (v, s) in enumerate(members):
                if v.replay_per_client > 0:
                    rng = np.random.default_rng([s, t, 10**6])
                    buffers[m] = [_extend(b, task, q, v.replay_per_client, rng) for b, q in zip(buffers[m], parts[s])]
        shape = (len(self.variants), len(self.seeds))
        return PopulationResult(
            acc.reshape(*shape, len(tasks), len(tasks)),
            norms.reshape(*shape, len(tasks), p.rounds),
            residual.reshape(shape),
            np.concatenate(learned, axis=1).reshape(*shape, -1),
        )


def _where(mask: torch.Tensor, a: Params, b: Params) -> Params:
    return {k: torch.where(mask.reshape(-1, *([1] * (a[k].ndim - 1))), a[k], b[k]) for k in a}


def _extend(buffer, task: Task, part: np.ndarray, size: int, rng: np.random.Generator):
    """A client's replay buffer after a task: a few of its own samples of that task added to what it kept."""
    keep = rng.choice(part, min(size, part.size), replace=False) if part.size else part
    return torch.cat([buffer[0], task.x_train[keep]]), torch.cat([buffer[1], task.y_train[keep]])
