"""GPU probe (benchmarks/gpu.py): SynGR's training step at the full-scale model size on synthetic token batches.

History of ``train.history`` items of ``codes.levels`` text codes then as many image codes, a target of both
code blocks plus the disambiguation code; the loss is SynGR's (three copies plus the contrastive term).
"""

from __future__ import annotations

import functools
from pathlib import Path

import torch

from repro.papers.syngr.model import Seq2Seq
from repro.papers.syngr.sequences import BOS, MODALITY_BLOCKS, VARIANTS
from repro.papers.syngr.synergy import seq2seq_loss, syngr_loss

BATCH_SIZE = 1024
STAGE = "train"  # one job per benchmark: every variant x seed of it (workflow/rules/syngr.smk)

# The Amazon Reviews 2018 5-core files (https://nijianmo.github.io/amazon/index.html) the real benchmarks read
# at paper scale: (reviews, reviewers). Video Games 497,577 reviews / 55,217 reviewers and Arts 494,485 /
# 56,210 as tallied from the files in public reports; Musical Instruments 27,530 reviewers as in UniSRec's
# table of the same 5-core data, its 231,392 reviews NOT verified against a source (it sets no cost: Video
# Games is the largest job). User data, no config key: keyed by the reviews file's name.
AMAZON_5CORE = {
    "Video_Games_5.json.gz": (497_577, 55_217),
    "Arts_Crafts_and_Sewing_5.json.gz": (494_485, 56_210),
    "Musical_Instruments_5.json.gz": (231_392, 27_530),
}


def build(section: dict, device, variant: str = "syngr"):
    """(model, batch(size), loss) of one training step of ``variant``: its modality blocks' codes per history
    item and target (repro.papers.syngr.sequences: concat and syngr both blocks, text / image / fused one), SynGR's
    loss for syngr and the plain sequence loss for the others, as train.py trains them."""
    m, codes, hist, syn = section["model"], section["codes"], section["train"]["history"], section["synergy"]
    levels, book = codes["levels"], codes["codebook"]
    blocks = len(MODALITY_BLOCKS[VARIANTS[variant]])
    vocab = BOS + 1 + blocks * levels * book + book
    per_item = blocks * levels
    model = Seq2Seq(vocab, m["d"], m["heads"], m["layers"], m["ff"], hist * per_item, per_item + 1).to(device)
    modality = torch.tensor([b for b in range(blocks) for _ in range(levels)] * hist, device=device)

    def make_batch(size: int):
        g = torch.Generator().manual_seed(size)
        src = torch.randint(BOS + 1, vocab, (size, hist * per_item), generator=g)
        tgt = torch.randint(BOS + 1, vocab, (size, per_item + 1), generator=g)
        tgt_in = torch.cat([torch.full((size, 1), BOS), tgt[:, :-1]], 1)
        return tuple(t.to(device) for t in (src, tgt_in, tgt))

    def loss(model, batch):
        if variant == "syngr":
            return syngr_loss(model, batch, modality, blocks, syn["ratio"], syn["weight"], syn["temperature"])
        logits, _ = model(batch[0], batch[1])
        return seq2seq_loss(logits, batch[2])

    return model, make_batch, loss


def arms(section: dict) -> dict[str, tuple]:
    """variant -> (build, batch) of every variant a train job trains (``variants`` of any benchmark); the cost
    benchmark counts each one's FLOPs per sample against the probe's (syngr) to weigh its samples in
    :func:`work`."""
    variants = {v for names in section["variants"].values() for v in names}
    return {v: (functools.partial(build, variant=v), int(section["train"]["batch"])) for v in sorted(variants)}


def training_samples(section: dict) -> dict[str, int]:
    """Leave-one-out training samples (one per position 1..n-3 of a user's n items) of each benchmark whose size
    is known: the synthetic ones from ``synthetic.users`` and the mean of n over U{min_length..max_length};
    the Amazon ones as reviews - 3 x reviewers (:data:`AMAZON_5CORE`; the reader's k-core re-filter, metadata
    join and ``max_sequence`` cut drop a few more). A real benchmark of another file or kind is not counted."""
    syn = section["synthetic"]
    per_user = (syn["min_length"] + syn["max_length"] - 6) / 2
    out = {name: int(syn["users"] * per_user) for name in ("synthetic_on", "synthetic_off")}
    for name, spec in section["real"].items():
        known = AMAZON_5CORE.get(Path(spec.get("reviews", "")).name) if spec.get("kind") == "amazon" else None
        if known:
            out[name] = known[0] - 3 * known[1]
    return out


def work(section: dict, shares: dict[str, float]) -> tuple[int, int]:
    """(samples, batch) of one job of the train stage: the benchmark whose job is largest, where a job trains
    each of ``variants[benchmark]`` for each of ``seeds`` for ``train.epochs`` epochs over its training samples
    (:func:`training_samples`), each variant's samples counted in probe (syngr) samples by its FLOP share
    ``shares[variant]`` (counted by the cost benchmark from :func:`arms`); batch ``train.batch``. Left out: the
    beam-search decoding of the test users, the attention shares and the masking check (forward only)."""
    tr, seeds, sizes = section["train"], len(section["seeds"]), training_samples(section)
    jobs = [
        sum(shares[v] for v in variants) * seeds * tr["epochs"] * sizes[name]
        for name, variants in section["variants"].items()
        if name in sizes
    ]
    return int(round(max(jobs))), int(tr["batch"])
