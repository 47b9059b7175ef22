"""GPU probe (benchmarks/gpu.py): ImgCoT's LM and image tokenizer at the section's size on a synthetic batch."""

from __future__ import annotations

import torch

from repro.papers.imgcot.models import ImageVQ, TinyLM, image_loss, lm_loss
from repro.papers.imgcot.problems import vocabulary

BATCH_SIZE = 64
SEQ_LEN = 128


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
