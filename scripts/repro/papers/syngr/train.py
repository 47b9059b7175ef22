"""Stage: train every variant of one benchmark for every seed, then generate top-K lists for the test users.

Variants: ``text`` / ``image`` (single-modality IDs), ``fused`` (alignment-centric fusion: one ID from the
CCA-fused embedding), ``concat`` (text IDs then image IDs per history item, MQL4GRec-like) and ``syngr`` (the same
inputs with SynGR's synergy objective added). Popularity is the non-learned baseline. Each (variant, seed) is a
resumable ``repro.learning.training.train`` run with batch order from ``epoch_rng``, so a rerun after an interruption ends
bit for bit where an uninterrupted one ends. Besides the rankings the stage records the implementation checks:
invalid generations, ID collisions, the masking count against floor(ratio * n_dom), and the attention share of
each modality before and after training.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import torch

from repro.learning.training import epoch_rng, fingerprint_of, seed_everything, train
from repro.papers.syngr import benchmark
from repro.papers.syngr.codes import collisions
from repro.papers.syngr.metrics import target_ranks
from repro.papers.syngr.model import Seq2Seq, beam_search, importance
from repro.papers.syngr.sequences import (
    PAD,
    Samples,
    Tokens,
    build_trie,
    decoder_io,
    encode_history,
    leave_one_out,
    tokenise,
)
from repro.papers.syngr.synergy import dominant_modality, mask_dominant, seq2seq_loss, syngr_loss
from repro.workflow.device import pick_device
from repro.workflow.io import atomic_path

log = logging.getLogger(__name__)


def tensors(samples: Samples, tokens: Tokens) -> tuple[torch.Tensor, ...]:
    src, _ = encode_history(samples.history, tokens)
    tgt_in, tgt_out = decoder_io(samples.target, tokens)
    return tuple(torch.as_tensor(a) for a in (src, tgt_in, tgt_out))


def build(tokens: Tokens, history: int, section: dict) -> Seq2Seq:
    m = section["model"]
    p, t = tokens.item_tokens.shape[1], tokens.target_tokens.shape[1]
    return Seq2Seq(tokens.vocab, m["d"], m["heads"], m["layers"], m["ff"], history * p, t)


def modality_shares(model: Seq2Seq, src: torch.Tensor, modality: torch.Tensor) -> np.ndarray:
    """Per sample, the share of the encoder's token importance that falls on the second modality block."""
    with torch.no_grad():
        imp = importance(model, src) * (src != PAD)
    return ((imp * (modality == 1)).sum(1) / imp.sum(1).clamp_min(1e-12)).cpu().numpy()


def modality_share(model: Seq2Seq, src: torch.Tensor, modality: torch.Tensor) -> float:
    """Share of the encoder's token importance that falls on the second modality block (mean over samples)."""
    return float(np.mean(modality_shares(model, src, modality)))


def masking_deviation(model: Seq2Seq, src: torch.Tensor, modality: torch.Tensor, ratio: float) -> int:
    """Largest |tokens masked - floor(ratio * dominant tokens)| over samples (0 when the masking is exact)."""
    with torch.no_grad():
        imp = importance(model, src)
    dom = dominant_modality(imp, src, modality, int(modality.max()) + 1)
    _, count = mask_dominant(src, imp, modality, dom, ratio)
    n_dom = ((modality.unsqueeze(0) == dom.unsqueeze(1)) & (src != PAD)).sum(1)
    return int((count - torch.floor(ratio * n_dom.double()).long()).abs().max())


def run_variant(
    variant: str, seed: int, stored: benchmark.Stored, section: dict, checkpoint: Path, code, device=None
) -> dict:
    """Train one (variant, seed) on ``device`` (default CPU); return the test ranking and the checks."""
    device = torch.device(device or "cpu")
    tr, syn, ev = section["train"], section["synergy"], section["eval"]
    tokens = tokenise(stored.codes, variant)
    splits = leave_one_out(stored.sequences, tr["history"])
    train_t, test_t = tensors(splits["train"], tokens), tensors(splits["test"], tokens)
    modality = torch.as_tensor(encode_history(splits["train"].history[:1], tokens)[1], device=device)
    test_src = test_t[0].to(device)
    blocks = int(modality.max()) + 1
    seed_everything(seed)
    model = build(tokens, tr["history"], section).to(device)
    share_before = modality_share(model, test_src, modality) if blocks > 1 else float("nan")
    n = len(train_t[0])

    def batches(epoch: int):
        order = torch.as_tensor(epoch_rng(seed, epoch).permutation(n))
        for i in range(0, n, tr["batch"]):
            idx = order[i : i + tr["batch"]]
            yield tuple(a[idx] for a in train_t)

    def loss_fn(model: Seq2Seq, batch) -> torch.Tensor:
        if variant == "syngr":
            return syngr_loss(model, batch, modality, blocks, syn["ratio"], syn["weight"], syn["temperature"])
        logits, _ = model(batch[0], batch[1])
        return seq2seq_loss(logits, batch[2])

    optimizer = torch.optim.AdamW(model.parameters(), lr=tr["lr"], weight_decay=tr["weight_decay"])
    start = time.perf_counter()
    result = train(
        model,
        loss_fn,
        batches,
        epochs=tr["epochs"],
        optimizer=optimizer,
        checkpoint=checkpoint,
        checkpoint_every=1,
        fingerprint=fingerprint_of([section, variant, seed], code),
        desc=f"syngr {variant} seed {seed}",
        seed=seed,
        device=device,
        precision=tr.get("precision", "fp32"),
    )
    trie = build_trie(tokens.target_tokens, tokens.vocab)
    ranked = beam_search(model, test_src, trie, ev["beams"], tokens.target_tokens.shape[1]).numpy()
    generated = ranked[ranked >= 0]
    return {
        "rank": target_ranks(ranked, splits["test"].target),
        "invalid": int(np.sum(~np.isin(generated, np.arange(len(stored.text))))),
        "generated": int(generated.size),
        "collisions": collisions(tokens.target_tokens),
        "masking_deviation": masking_deviation(model, train_t[0][:512].to(device), modality, syn["ratio"])
        if blocks > 1
        else 0,
        "share_before": share_before,
        "share_after": modality_share(model, test_src, modality) if blocks > 1 else float("nan"),
        "user_share_after": modality_shares(model, test_src, modality)
        if blocks > 1
        else np.full(len(test_src), np.nan),
        "loss": np.array([h["loss"] for h in result.history]),
        "seconds": time.perf_counter() - start,
    }


def popularity_ranks(stored: benchmark.Stored, history: int, k: int) -> np.ndarray:
    """Ranks of the test targets in the list of the k items most frequent among training targets."""
    splits = leave_one_out(stored.sequences, history)
    counts = np.bincount(splits["train"].target, minlength=len(stored.text))
    top = np.argsort(-counts, kind="stable")[:k]
    return target_ranks(np.tile(top, (len(splits["test"].target), 1)), splits["test"].target)


def main(job) -> None:
    section = job.params.settings
    torch.set_num_threads(job.threads)
    device = pick_device(job.params.device)
    name = job.wildcards.benchmark
    stored = benchmark.read(job.input.benchmark)
    variants, seeds = section["variants"][name], section["seeds"]
    ckpt_dir = Path(job.output.runs).parent / "checkpoints" / name
    out: dict[str, list] = {}
    for variant in variants:
        for seed in seeds:
            log.info("%s: training %s, seed %d", name, variant, seed)
            r = run_variant(variant, seed, stored, section, ckpt_dir / f"{variant}_{seed}.pt", job.input.code, device)
            for key, value in r.items():
                out.setdefault(key, []).append(value)
    pop = popularity_ranks(stored, section["train"]["history"], section["eval"]["beams"])
    shape = (len(variants), len(seeds))
    with atomic_path(job.output.runs) as tmp, open(tmp, "wb") as fh:
        np.savez(
            fh,
            variants=np.array(variants),
            seeds=np.array(seeds),
            rank=np.array(out["rank"]).reshape(*shape, -1),
            popularity_rank=pop,
            loss=np.array(out["loss"]).reshape(*shape, -1),
            train_seconds=np.array(out["seconds"]).reshape(shape),
            **{k: np.array(out[k]).reshape(shape) for k in ("invalid", "generated", "collisions", "masking_deviation")},
            **{k: np.array(out[k], dtype=float).reshape(shape) for k in ("share_before", "share_after")},
            user_share_after=np.array(out["user_share_after"], dtype=float).reshape(*shape, -1),
        )
    for path in ckpt_dir.glob("*.pt"):
        path.unlink()
    log.info("%s done", name)
