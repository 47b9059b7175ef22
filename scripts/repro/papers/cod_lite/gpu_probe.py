"""GPU probe (benchmarks/gpu.py): one training step of CoD-Lite's diffusion decoder at the configured size.

The batch holds training crops of the configured side; the condition is a map of codebook vectors at the
codec's resolution, as the teacher's fine-tuning step sees it.
"""

from __future__ import annotations

import functools

import torch

from repro.papers.cod_lite.model import Discriminator
from repro.papers.cod_lite.train import Codec, Distiller, codec_loss, denoiser, diffusion_loss, dmd_loss

BATCH_SIZE = 16
STAGE = "train"  # one job per seed (workflow/rules/cod-lite.smk): the codec, both teachers and the student


def build(section: dict, device):
    cfg, side = section["model"], section["images"]["crop"]
    net = denoiser(cfg).to(device)
    codebook = torch.randn(2 ** cfg["bits"], cfg["latent"], device=device)

    def condition(x: torch.Tensor) -> torch.Tensor:
        idx = torch.randint(0, len(codebook), (len(x), side // cfg["ds"], side // cfg["ds"]), device=x.device)
        return codebook[idx].permute(0, 3, 1, 2)

    def make_batch(size: int):
        return (torch.rand(size, 3, side, side, device=device) * 2 - 1,)

    return net, make_batch, diffusion_loss(condition)


def _codec(section: dict, device):
    """The codec's training step (analysis, quantiser, MSE synthesis)."""
    net = Codec(section["model"]).to(device)
    side = section["images"]["crop"]
    return (
        net,
        lambda size: (torch.rand(size, 3, side, side, device=device) * 2 - 1,),
        codec_loss(section["train"]["beta"]),
    )


def _code_condition(section: dict, device):
    """``condition(x)``: the frozen codec's quantised code of a batch, as train_seed's target condition."""
    codec = Codec(section["model"]).to(device).eval()
    for p in codec.parameters():
        p.requires_grad_(False)
    return lambda x: codec.vq.embed(codec.indices(x))


def _teacher(section: dict, device, conditioned: bool = True):
    """A teacher's step as train_seed runs it: conditioned on the frozen codec's code of the batch (its
    forward without gradients; the coarse code of the pre-training costs the same), or unconditional (the
    generation-oriented arm's pre-training)."""
    net, make_batch, _ = build(section, device)
    return net, make_batch, diffusion_loss(_code_condition(section, device) if conditioned else None)


def _distill(section: dict, device):
    """The distillation step: student, fake score and discriminator trained together against the frozen
    teacher (forward only), conditioned on the frozen codec's code. Not counted: the generation-oriented
    teacher, which stays on the device without gradients or optimiser state (its weights, 0.3 GB at full
    scale)."""
    cfg = section["model"]
    teacher = denoiser(cfg).to(device)
    net = Distiller(denoiser(cfg), denoiser(cfg), Discriminator(cfg["disc_width"], cfg["latent"])).to(device)
    _, make_batch, _ = build(section, device)
    return net, make_batch, dmd_loss(teacher, _code_condition(section, device), section["train"]["distill"])


def arms(section: dict) -> dict[str, tuple]:
    """The steps of a seed's train job (train.train_seed), each at ``train.batch``: the codec, a conditioned
    teacher (the compression-oriented arm's pre-training and both fine-tunings), the unconditional
    pre-training of the generation-oriented arm and the distillation. The cost benchmark counts each one's
    FLOPs per crop against the probe's (a denoiser step on a random code) to weigh its crops in :func:`work`,
    and its device memory (the distillation's is the job's largest: three networks trained, a teacher and the
    codec forward)."""
    batch = int(section["train"]["batch"])
    return {
        "codec": (_codec, batch),
        "teacher": (_teacher, batch),
        "unconditional": (functools.partial(_teacher, conditioned=False), batch),
        "distill": (_distill, batch),
    }


def work(section: dict, shares: dict[str, float]) -> tuple[int, int]:
    """(samples, batch) of one seed's train job, in denoiser training steps (the probe's), over the
    ``images.crops`` crops every epoch (the store holds exactly that many; the last short batch of a group
    counts): the codec's ``train.ae_epochs``; the two teachers' ``train.pretrain_epochs`` (one conditioned, one
    unconditional) and ``train.finetune_epochs`` each (conditioned); the distillation's
    ``train.distill.epochs``; each crop of a step at its arm's FLOP share ``shares[arm]`` (counted by the cost
    benchmark from :func:`arms`). Batch ``train.batch``. Left out: the decoding of the test images
    (``sampler_steps`` forward passes each), the codebook's initialisation and k-means, the timing repeats."""
    t = section["train"]
    per_crop = (
        t["ae_epochs"] * shares["codec"]
        + t["pretrain_epochs"] * (shares["teacher"] + shares["unconditional"])
        + t["finetune_epochs"] * 2 * shares["teacher"]
        + t["distill"]["epochs"] * shares["distill"]
    )
    return int(round(section["images"]["crops"] * per_crop)), int(t["batch"])
