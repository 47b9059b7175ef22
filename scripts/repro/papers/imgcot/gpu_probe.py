"""GPU probe (benchmarks/gpu.py): ImgCoT's LM and image tokenizer at the section's size on a synthetic batch."""

from __future__ import annotations

import torch

from repro.papers.imgcot.methods import METHODS
from repro.papers.imgcot.models import ImageVQ, TinyLM, image_loss, lm_loss
from repro.papers.imgcot.problems import vocabulary

BATCH_SIZE = 64
SEQ_LEN = 128
STAGE = "train"  # the one train job: both tokenizers, then every method's LM (workflow/rules/imgcot.smk)

# FLOPs of one text-autoencoder training sample (GRU hidden 256 over the ~42-token chains) per FLOP of the
# probe's sample (the LM at SEQ_LEN plus the image VQ-VAE), counted with torch's FlopCounterMode at
# full.yaml's sizes. The image VQ-VAE is 0.02 of the probe's sample and rides in it.
TEXT_AE_FLOP_SHARE = 0.34


def build(section: dict, device):
    lat, lm_cfg, img = section["latent"], section["lm"], section["image"]
    vocab = len(vocabulary(lat["codebook"]))
    lm = TinyLM(vocab, lm_cfg["d_model"], lm_cfg["layers"], lm_cfg["heads"], SEQ_LEN).to(device)
    vq = ImageVQ(lat["n_latent"], lat["codebook"], lat["dim"], img["height"], img["width"]).to(device)
    model = torch.nn.ModuleDict({"lm": lm, "vq": vq})

    def make_batch(size: int):
        ids = torch.randint(0, vocab, (size, SEQ_LEN), device=device)
        images = torch.rand(size, img["height"], img["width"], device=device)
        return ids, torch.ones(size, SEQ_LEN, device=device), images

    def loss(m, batch):
        ids, weight, images = batch
        return lm_loss(m["lm"], (ids, weight)) + image_loss(m["vq"], images)

    return model, make_batch, loss


def work(section: dict) -> tuple[int, int]:
    """(samples, batch) of the train stage's one job: the LM's samples, ``lm.batches_per_epoch`` batches of
    min(``lm.batch``, ``n_train``) per epoch for ``lm.epochs`` (full CoT) plus ``lm.finetune_epochs`` for
    each other method of repro.papers.imgcot.methods.METHODS, each one probe sample (its image VQ-VAE share
    covers the VQ-VAE's own tokenizer epochs, fewer samples); plus the text autoencoder's
    ``tokenizer.epochs`` x ``tokenizer.batches_per_epoch`` x min(``tokenizer.batch``, ``n_train``) samples at
    :data:`TEXT_AE_FLOP_SHARE`. Batch: the LM's. Left out: L-ImgCoT's step scoring, the test decoding and the
    codes of every problem (forward only)."""
    lm, tok, n = section["lm"], section["tokenizer"], section["n_train"]
    lm_samples = (
        lm["batches_per_epoch"] * min(lm["batch"], n) * (lm["epochs"] + (len(METHODS) - 1) * lm["finetune_epochs"])
    )
    tok_samples = tok["epochs"] * tok["batches_per_epoch"] * min(tok["batch"], n)
    return int(lm_samples + round(TEXT_AE_FLOP_SHARE * tok_samples)), int(min(lm["batch"], n))
