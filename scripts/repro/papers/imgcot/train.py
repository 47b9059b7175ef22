"""Stage: train both tokenizers, every LM variant, select L-ImgCoT's steps, decode the test problems.

Order matters (the brief's pipeline): the image VQ-VAE and the text autoencoder are trained first and give
each problem its latent codes; the full-CoT LM is trained next, because L-ImgCoT keeps the k textual steps
with the lowest mean token log-likelihood under it; then every other method (no CoT included) is fine-tuned
from the full-CoT model with the same schedule, the small-scale stand-in for fine-tuning one pretrained LLM. Output ``predictions.parquet`` (one row per test problem x method: predicted and true answer,
reasoning tokens in the target and in the decoded output, decode seconds) and ``tokenizers.json``
(reconstruction error, codebook perplexity).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import zarr

from repro.learning.training import epoch_rng, fingerprint_of, seed_everything, train
from repro.papers.imgcot.methods import METHODS, selection
from repro.papers.imgcot.models import ImageVQ, TextAE, TinyLM, image_loss, lm_loss, text_loss
from repro.papers.imgcot.problems import vocabulary
from repro.papers.imgcot.sequences import Encoder, select_steps
from repro.workflow.device import pick_device
from repro.workflow.io import InputError, atomic_path, write_json


def load(problems: str, images: str) -> tuple[pd.DataFrame, np.ndarray]:
    try:
        table = pd.read_parquet(problems)
        store = zarr.open_group(images, mode="r")
        pixels, rows = np.asarray(store["images"]), np.asarray(store["row"])
    except (OSError, KeyError, ValueError) as err:
        raise InputError(problems, f"cannot read the problems or the images ({err})") from err
    if not np.array_equal(rows, np.arange(len(table))):
        raise InputError(images, f"{len(rows)} images for {len(table)} problems: the store does not match the table")
    return table, pixels.astype(np.float32) / 255.0


def batches_of(rows: np.ndarray, section: dict, seed: int, make):
    """``batches(epoch)``: the section's ``batches_per_epoch`` batches of ``batch`` training rows, drawn from the
    epoch's own rng; ``make(rows)`` builds one batch."""

    def batches(epoch: int):
        rng = epoch_rng(seed, epoch)
        size = min(section["batch"], len(rows))
        for _ in range(section["batches_per_epoch"]):
            yield make(rows[rng.choice(len(rows), size=size, replace=False)])

    return batches


def fit(model, loss, batches, cfg: dict, name: str, job, device, extra=()) -> None:
    """One ``repro.learning.training.train`` run with its own checkpoint (a rerun resumes it)."""
    seed = job.params.seed
    ckpt = Path(job.params.checkpoints) / f"{name}.pt"
    train(
        model,
        loss,
        batches,
        epochs=cfg["epochs"],
        optimizer=torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.0),
        checkpoint=ckpt,
        checkpoint_every=1,
        grad_clip=1.0,
        fingerprint=fingerprint_of([job.params.settings, name, seed, *extra], job.input.code),
        desc=f"imgcot {name}",
        seed=seed,
        device=device,
    )


def codes_of(model, inputs: torch.Tensor, chunk: int = 512) -> np.ndarray:
    model.eval()
    with torch.no_grad():
        return np.concatenate(
            [model.encode(inputs[i : i + chunk])[1].cpu().numpy() for i in range(0, len(inputs), chunk)]
        )


def image_errors(vq, image_t, images, train_rows, rows) -> tuple[np.ndarray, np.ndarray]:
    """Per held-out image: the VQ-VAE's reconstruction MSE and that of the mean training image."""
    vq.eval()
    with torch.no_grad():
        recon = torch.cat([vq(image_t[rows[i : i + 256]])[0] for i in range(0, len(rows), 256)]).numpy()
    mean_image = images[train_rows].mean(0)
    return ((recon - images[rows]) ** 2).mean((1, 2)), ((images[rows] - mean_image) ** 2).mean((1, 2))


def text_errors(tae, ids, mask) -> tuple[np.ndarray, np.ndarray]:
    """Per held-out chain of thought (rows of ``ids``): the text autoencoder's mean token NLL of its
    reconstruction from its own codes, and from another held-out chain's codes (the next row's). The decoder is
    autoregressive, so it predicts much of a chain from the chain's own earlier tokens: the second number is
    what it does without the codes' information, and the gap is what the codes carry."""
    tae.eval()
    with torch.no_grad():
        q = tae.encode(ids)[0]
        m = mask[:, 1:]

        def nll(codes: torch.Tensor) -> np.ndarray:
            logits = tae.decode(codes, ids)
            tokens = torch.nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="none"
            ).reshape(len(ids), -1)
            return ((tokens * m).sum(1) / m.sum(1)).numpy()

        return nll(q), nll(torch.roll(q, 1, dims=0))


def perplexity(codes: np.ndarray, codebook: int) -> float:
    p = np.bincount(codes.ravel(), minlength=codebook) / codes.size
    p = p[p > 0]
    return float(np.exp(-np.sum(p * np.log(p))))


def main(job) -> None:
    cfg = job.params.settings
    torch.set_num_threads(int(getattr(job, "threads", 1) or 1))
    device = pick_device(job.params.device)
    seed = job.params.seed
    seed_everything(seed)
    table, images = load(job.input.problems, job.input.images)
    lat, lm_cfg = cfg["latent"], cfg["lm"]
    vocab = vocabulary(lat["codebook"])
    enc = Encoder(vocab, table)
    train_rows = np.flatnonzero(table["split"].to_numpy() == "train")

    # 1. tokenizers: the same number of codes from the same codebook size
    image_t = torch.from_numpy(images)
    vq = ImageVQ(lat["n_latent"], lat["codebook"], lat["dim"], *images.shape[1:])
    fit(
        vq,
        image_loss,
        batches_of(train_rows, cfg["tokenizer"], seed, lambda r: image_t[r]),
        cfg["tokenizer"],
        "tokenizer_image",
        job,
        device,
    )
    cot_ids, cot_mask = enc.cot_tensors()
    tae = TextAE(len(vocab), lat["n_latent"], lat["codebook"], lat["dim"], cfg["tokenizer"]["hidden"])
    fit(
        tae,
        text_loss,
        batches_of(train_rows, cfg["tokenizer"], seed, lambda r: (cot_ids[r], cot_mask[r])),
        cfg["tokenizer"],
        "tokenizer_text",
        job,
        device,
    )
    vq, tae = vq.cpu(), tae.cpu()
    codes = {"imgcot": codes_of(vq, image_t), "text_ae": codes_of(tae, cot_ids)}
    held = np.flatnonzero(table["split"].to_numpy() != "train")
    image_err, image_base = image_errors(vq, image_t, images, train_rows, held)
    text_err, text_base = text_errors(tae, cot_ids[held], cot_mask[held])
    tokenizers = {
        "image_recon_mse": float(np.mean(image_err)),
        "image_baseline_mse": float(np.mean(image_base)),
        # per held-out problem: the learning checks of both tokenizers
        "image_error": image_err.tolist(),
        "image_mean_image_error": image_base.tolist(),
        "text_nll": text_err.tolist(),
        "text_other_codes_nll": text_base.tolist(),
        "perplexity": {k: perplexity(v, lat["codebook"]) for k, v in codes.items()},
        "codebook": lat["codebook"],
        "n_latent": lat["n_latent"],
    }

    # 2. LMs: the full-CoT model first (it scores the steps L-ImgCoT keeps); every other method is fine-tuned
    # from it with the same schedule, as the paper fine-tunes one pretrained LLM per method.
    rows, models = [], {}
    kept: dict[str, list[list[int]]] = {}
    data = {}
    for method in METHODS:
        if method.startswith("l_imgcot"):
            k, rule = selection(method)
            kept[method] = select_steps(models["full_cot"], enc, k, rule, seed)
        data[method] = enc.sequences(method, codes, kept.get(method))
        ids, weight = data[method]
        model = TinyLM(len(vocab), lm_cfg["d_model"], lm_cfg["layers"], lm_cfg["heads"], enc.max_len(codes))
        schedule = lm_cfg
        if method != "full_cot":
            model.load_state_dict(models["full_cot"].state_dict())
            schedule = lm_cfg | {"epochs": lm_cfg["finetune_epochs"]}
        fit(
            model,
            lm_loss,
            batches_of(train_rows, lm_cfg, seed, lambda r: (ids[r], weight[r])),
            schedule,
            method,
            job,
            device,
        )
        models[method] = model.cpu().eval()
        start = time.perf_counter()
        decoded = enc.decode(models[method], method)
        seconds = (time.perf_counter() - start) / max(len(decoded), 1)
        targets = enc.reasoning_lengths(method, codes, kept.get(method))
        for d in decoded:
            rows.append({"method": method, **d, "target_tokens": int(targets[d["row"]]), "decode_seconds": seconds})
    with atomic_path(job.output.predictions) as tmp:
        pd.DataFrame(rows).to_parquet(tmp, index=False)
    write_json(job.output.tokenizers, tokenizers)
    for name in ("tokenizer_image", "tokenizer_text", *METHODS):
        (Path(job.params.checkpoints) / f"{name}.pt").unlink(missing_ok=True)
