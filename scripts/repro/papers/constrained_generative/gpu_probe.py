"""GPU probe (benchmarks/gpu.py): the RealNVP stack of the configured size on normal-space-perturbed points."""

from __future__ import annotations

import torch

from repro.papers.constrained_generative.manifolds import manifold
from repro.papers.constrained_generative.models import build as build_model
from repro.papers.constrained_generative.train import GAIN_POINTS

BATCH_SIZE = 1024
STAGE = "train"  # workflow/rules/constrained-generative.smk: one job (the run's seed, no wildcards)


def build(section: dict, device):
    """One member per seed, ambient dimension of the largest configured task, a synthetic perturbed batch."""
    d = max(manifold(t).d for t in section["tasks"])
    model = build_model("flow", [int(s) for s in section["seeds"]], d, section["models"]["flow"]).to(device)
    members = len(section["seeds"])

    def make_batch(size: int) -> torch.Tensor:
        gen = torch.Generator(device=device).manual_seed(0)
        x = torch.randn(members, size, d, generator=gen, device=device)
        return (
            x
            / x.norm(dim=-1, keepdim=True)
            * (1 + float(section["sigma"]) * torch.randn(members, size, 1, generator=gen, device=device))
        )

    def loss(model, batch: torch.Tensor) -> torch.Tensor:
        return model.loss(batch).sum()

    return model, make_batch, loss


def _mlp_macs(sizes: list[int], input_grad: bool) -> tuple[int, int]:
    """(forward, forward + backward) multiply-accumulates of one point through a member's MLP of ``sizes``:
    each product, its weight gradient and its input gradient (the first layer's only if ``input_grad``)."""
    layers = [a * b for a, b in zip(sizes[:-1], sizes[1:])]
    return sum(layers), 3 * sum(layers) - (0 if input_grad else layers[0])


def point_macs(kind: str, d: int, cfg: dict) -> tuple[int, int]:
    """(forward, forward + backward) multiply-accumulates of one point per member of a ``kind`` stack in
    ambient dimension ``d`` (``models.<kind>``): the flow's couplings (the first one's input is the data, which
    needs no gradient), or the DDPM's noise predictor on the point and its four time features."""
    hidden = [int(cfg["hidden"])] * int(cfg["layers"])
    if kind == "flow":
        counts = [_mlp_macs([d, *hidden, 2 * d], k > 0) for k in range(int(cfg["couplings"]))]
        return sum(c[0] for c in counts), sum(c[1] for c in counts)
    if kind == "ddpm":
        return _mlp_macs([d + 4, *hidden, d], False)
    raise ValueError(f"unknown model {kind!r}: expected ddpm or flow")


def work(section: dict) -> tuple[int, int]:
    """(samples, batch) of the train job, in points (per member) of the probe's step: the flow stack at the
    largest task's dimension.

    For every task (its dimension d from manifolds.manifold) x ``model_kinds`` x ``perturbations`` the job
    trains one stack for ``models.<kind>.epochs`` (else ``train.epochs``) epochs of ``train.steps_per_epoch``
    steps of ``train.batch`` points per member, validates it every epoch on the task's ``n_test`` points
    (``task_settings``), and samples ``samples`` points from it untrained and trained (the DDPM through its
    ``models.ddpm.steps`` reverse steps) plus, for a DDPM, the 2 x GAIN_POINTS forwards of the normal gain.
    Each point is counted by its multiply-accumulates (:func:`point_macs`: a forward-only pass by its
    forward's) over those of a point of the probe's flow step. Left out: the perturbations, the normal bases' QR
    (NumPy) and the flows' elementwise work. Batch ``train.batch``."""
    tr, n = section["train"], int(section["samples"])
    probe = point_macs("flow", max(manifold(t).d for t in section["tasks"]), section["models"]["flow"])[1]
    total = 0
    for task in section["tasks"]:
        d, n_test = manifold(task).d, int(section["task_settings"][task]["n_test"])
        for kind in section["model_kinds"]:
            cfg = section["models"][kind]
            forward, step = point_macs(kind, d, cfg)
            epochs = int(cfg.get("epochs", tr["epochs"]))
            trained = epochs * int(tr["steps_per_epoch"]) * int(tr["batch"]) * step
            forwards = epochs * n_test + 2 * n * (int(cfg["steps"]) if kind == "ddpm" else 1)
            forwards += 2 * GAIN_POINTS if kind == "ddpm" else 0
            total += len(section["perturbations"]) * (trained + forwards * forward)
    return round(total / probe), int(tr["batch"])
