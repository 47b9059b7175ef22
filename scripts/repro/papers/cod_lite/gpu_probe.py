"""GPU probe (benchmarks/gpu.py): one training step of CoD-Lite's diffusion decoder at the configured size.

The batch holds training crops of the configured side; the condition is a map of codebook vectors at the
codec's resolution, as the teacher's fine-tuning step sees it.
"""

from __future__ import annotations

import torch

from repro.papers.cod_lite.train import denoiser, diffusion_loss

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


def _macs(section: dict) -> dict[str, float]:
    """Multiply-accumulates of one forward pass per training crop of each network (convolutions, the VQ
    distances; the time MLP and FiLM are per sample and left out), from the ``model`` sizes and the crop side:
    ``denoiser`` (the probe's network), ``encoder`` (the codec's analysis transform and quantiser), ``codec``
    (encoder + MSE synthesis) and ``disc`` (the student's discriminator)."""
    m, side = section["model"], section["images"]["crop"]
    w, lat, ds, p = m["width"], m["latent"], m["ds"], m["patch"]
    coarse, fine = (side // ds) ** 2, (side // p) ** 2  # positions at the codec's and the denoiser's resolution
    res = 18 * w * w  # one residual block: two 3x3 width -> width convolutions
    denoiser = fine * (3 * p * p * w + m["denoiser_blocks"] * res + 27 * p * p * w) + coarse * 9 * lat * w
    encoder = coarse * (3 * ds * ds * w + m["blocks"] * res + 9 * w * lat + lat * 2 ** m["bits"])
    synthesis = coarse * (9 * lat * w + m["blocks"] * res + 27 * ds * ds * w)
    d = m["disc_width"]
    disc = (side // 2) ** 2 * 48 * d + coarse * lat * d + (side // 4) ** 2 * (16 * d * d + 9 * d)
    return {"denoiser": denoiser, "encoder": encoder, "codec": encoder + synthesis, "disc": disc}


def work(section: dict) -> tuple[int, int]:
    """(samples, batch) of one seed's train job, in denoiser training steps (the probe's), over the
    ``images.crops`` crops every epoch (the store holds exactly that many; the last short batch of a group
    counts): the two teachers' ``train.pretrain_epochs`` + ``train.finetune_epochs`` each (2 per crop and
    epoch); the distillation's ``train.distill.epochs`` at 8/3 + 3 x disc/denoiser per crop (student and fake
    score forward and backward, teacher and fake score forward without backward at 1/3, three discriminator
    passes); the codec's ``train.ae_epochs`` at codec/denoiser; and the frozen encoder's forward (1/3 x
    encoder/denoiser) wherever a step is conditioned on the codec (all but the generation-oriented
    pre-training). The ratios are the forward MACs of :func:`_macs` (within 1 % of torch's FlopCounterMode at
    full.yaml's sizes: codec 0.36, distillation 2.72). Batch ``train.batch``. Left out: the decoding of the
    test images (``sampler_steps`` forward passes each), the timing repeats and the codebook's k-means."""
    t, macs = section["train"], _macs(section)
    ratio = {k: v / macs["denoiser"] for k, v in macs.items()}
    cond = ratio["encoder"] / 3  # the frozen codec's indices of a batch: forward only
    per_crop = (
        t["ae_epochs"] * ratio["codec"]
        + t["pretrain_epochs"] * (2 + cond)  # compression-oriented arm (coarse code) + unconditional arm
        + t["finetune_epochs"] * 2 * (1 + cond)
        + t["distill"]["epochs"] * (8 / 3 + 3 * ratio["disc"] + cond)
    )
    return int(round(section["images"]["crops"] * per_crop)), int(t["batch"])
