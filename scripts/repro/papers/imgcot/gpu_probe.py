"""GPU probe (benchmarks/gpu.py): ImgCoT's LM and image tokenizer at the section's size on a synthetic batch.

The LM's positions and the text autoencoder's chain width are what train.py sizes them to from the problems
(``Encoder.max_len``, ``Encoder.cot_tensors``), the problems drawn as the data stage draws them (without the
rendering): at full.yaml's sizes 79 positions and chains of 42 tokens.
"""

from __future__ import annotations

import functools
import json

import numpy as np
import torch

from repro.papers.imgcot.data import draw_problems, problem_table
from repro.papers.imgcot.methods import METHODS
from repro.papers.imgcot.models import ImageVQ, TextAE, TinyLM, image_loss, lm_loss, text_loss
from repro.papers.imgcot.problems import vocabulary
from repro.papers.imgcot.sequences import Encoder

BATCH_SIZE = 64
STAGE = "train"  # the one train job: both tokenizers, then every method's LM (workflow/rules/imgcot.smk)


@functools.lru_cache(maxsize=8)
def _lengths(section_json: str) -> tuple[int, int]:
    section = json.loads(section_json)
    lat = section["latent"]
    enc = Encoder(vocabulary(lat["codebook"]), problem_table(draw_problems(section)))
    return enc.max_len({"imgcot": np.zeros((1, lat["n_latent"]))}), int(enc.cot_tensors()[0].shape[1])


def sequence_lengths(section: dict) -> tuple[int, int]:
    """(LM positions, text-autoencoder chain width) of the section's problems, as train.py sizes them (drawn once
    per section: 24,000 problems take seconds, and a step is built several times per count)."""
    return _lengths(json.dumps(section, sort_keys=True))


def _lm(section: dict, device):
    lat, lm_cfg = section["latent"], section["lm"]
    vocab, seq_len = len(vocabulary(lat["codebook"])), sequence_lengths(section)[0]
    lm = TinyLM(vocab, lm_cfg["d_model"], lm_cfg["layers"], lm_cfg["heads"], seq_len).to(device)

    def make_batch(size: int):
        return torch.randint(0, vocab, (size, seq_len), device=device), torch.ones(size, seq_len, device=device)

    return lm, make_batch, lm_loss


def _image_vq(section: dict, device):
    lat, img = section["latent"], section["image"]
    vq = ImageVQ(lat["n_latent"], lat["codebook"], lat["dim"], img["height"], img["width"]).to(device)
    return vq, lambda size: torch.rand(size, img["height"], img["width"], device=device), image_loss


def _text_ae(section: dict, device):
    lat, width = section["latent"], sequence_lengths(section)[1]
    vocab = len(vocabulary(lat["codebook"]))
    tae = TextAE(vocab, lat["n_latent"], lat["codebook"], lat["dim"], section["tokenizer"]["hidden"]).to(device)

    def make_batch(size: int):
        return torch.randint(1, vocab, (size, width), device=device), torch.ones(size, width, device=device)

    return tae, make_batch, text_loss


def build(section: dict, device):
    """The LM's step and the image VQ-VAE's together (the device holds both in the train job)."""
    lm, lm_batch, _ = _lm(section, device)
    vq, vq_batch, _ = _image_vq(section, device)
    model = torch.nn.ModuleDict({"lm": lm, "vq": vq})

    def make_batch(size: int):
        return lm_batch(size), vq_batch(size)

    def loss(m, batch):
        return lm_loss(m["lm"], batch[0]) + image_loss(m["vq"], batch[1])

    return model, make_batch, loss


def arms(section: dict) -> dict[str, tuple]:
    """The three networks the train job trains, each alone: the LM (batch ``lm.batch``), the image VQ-VAE and the
    text autoencoder (batch ``tokenizer.batch``); the cost benchmark counts each one's FLOPs per sample against
    the probe's (LM + image VQ-VAE) to weigh its samples in :func:`work`."""
    n = section["n_train"]
    lm_batch, tok_batch = min(section["lm"]["batch"], n), min(section["tokenizer"]["batch"], n)
    return {"lm": (_lm, lm_batch), "image_vq": (_image_vq, tok_batch), "text_ae": (_text_ae, tok_batch)}


def work(section: dict, shares: dict[str, float]) -> tuple[int, int]:
    """(samples, batch) of the train stage's one job, in probe samples: the LM's ``lm.batches_per_epoch``
    batches of min(``lm.batch``, ``n_train``) per epoch for ``lm.epochs`` (full CoT) plus ``lm.finetune_epochs``
    for each other method of repro.papers.imgcot.methods.METHODS, at ``shares['lm']``; each tokenizer's
    ``tokenizer.epochs`` x ``tokenizer.batches_per_epoch`` x min(``tokenizer.batch``, ``n_train``) samples at
    its share (``image_vq``, ``text_ae``; counted by the cost benchmark from :func:`arms`). Batch: the LM's.
    Left out: L-ImgCoT's step scoring, the test decoding and the codes of every problem (forward only)."""
    lm, tok, n = section["lm"], section["tokenizer"], section["n_train"]
    lm_samples = (
        lm["batches_per_epoch"] * min(lm["batch"], n) * (lm["epochs"] + (len(METHODS) - 1) * lm["finetune_epochs"])
    )
    tok_samples = tok["epochs"] * tok["batches_per_epoch"] * min(tok["batch"], n)
    total = lm_samples * shares["lm"] + tok_samples * (shares["image_vq"] + shares["text_ae"])
    return int(round(total)), int(min(lm["batch"], n))
