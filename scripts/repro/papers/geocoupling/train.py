"""Stage: the bi-level coupling search and the final comparison, all members trained as stacks.

1. Warm start, one member per seed: the co-design model trained on independent uniform times, which covers
   the whole (t_struct, t_seq) square, so that every coupling starts from the same network of its seed.
2. Inner loop of the search: each candidate curve t_seq = t_struct ** alpha is fine-tuned from its seed's warm
   start along its own curve (+- jitter) for a fixed budget and sampled along it from a validation sampling
   seed; its score is the validation quality (mean over samples of validity x consistency, with the nearest-
   fragment references from the validation chains). Outer loop, per seed: the GP-EI search over log(alpha)
   (:func:`repro.papers.geocoupling.bo.search`). The selected alpha (best validation quality) is the learned
   coupling.
3. Final comparison, every coupling with the same budget (warm start + one fine-tuning) and sampled from a
   test sampling seed: the learned curve is fine-tuned afresh from the warm start with a data order of its
   own (so that the search's luckiest run is not the one compared), and so is the random coupling; a fixed
   curve of the search's initial design (synchronous: alpha = 1, alpha_0.5, alpha_2) is the search's own
   fine-tuned run, which no selection picked. The untrained initialisation of each seed is sampled along
   the same curves (the learning checks' trivial generator).

Each fit decays the learning rate along a half cosine over its steps (the step number travels with the batch,
so a resumed run sets the same rates).

Every training run keeps a checkpoint, so a rerun after an interruption resumes and ends with the same samples.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import torch

from repro.learning.training import epoch_rng, fingerprint_of, train
from repro.papers.geocoupling.bo import search
from repro.papers.geocoupling.coupling import Coupling, named
from repro.papers.geocoupling.model import CoDesigner, loss, sample, training_times
from repro.papers.geocoupling.scores import Scorer
from repro.papers.geocoupling.windows import Standardiser
from repro.workflow.io import InputError, atomic_path, read_npz

log = logging.getLogger(__name__)
VAL_SAMPLING_SEED, TEST_SAMPLING_SEED, TIMES_SEED = 1001, 2002, 4004
WARM, SEARCH, FINAL = 0, 1, 100  # offsets of the training seeds of the three kinds of stack
REQUIRED = ("train_seq", "train_x", "val_seq", "val_backbone", "feature_mean", "feature_scale", "width")


class Trainer:
    """Training data and settings shared by every stack of (coupling, seed) members."""

    def __init__(self, data: dict[str, np.ndarray], settings: dict, seed: int, code: list[str], checkpoints: Path):
        self.settings, self.seed, self.code, self.checkpoints = settings, seed, code, checkpoints
        self.seq = torch.as_tensor(data["train_seq"], dtype=torch.long)
        self.x = torch.as_tensor(data["train_x"], dtype=torch.float32)
        self.width = int(data["width"])
        self.standard = Standardiser(data["feature_mean"], data["feature_scale"])
        self.scorer = Scorer(data, int(settings["scores"]["prefilter"]))

    def network(self, seeds: list[int]) -> CoDesigner:
        cfg = self.settings["model"]
        return CoDesigner(seeds, self.width, self.x.shape[1], int(cfg["hidden"]), int(cfg["depth"]))

    def fit(
        self, name: str, members: list[tuple[Coupling, int]], epochs: int, offset: int, warm: CoDesigner | None
    ) -> CoDesigner:
        """Train one stack (checkpointed under ``name``) for ``epochs``, started from the warm start of each
        member's seed when given; members of one seed see the same examples (a paired comparison)."""
        cfg = self.settings["train"]
        seeds = [s for _, s in members]
        model = self.network(seeds)
        distinct = sorted(set(seeds))
        row = torch.tensor([distinct.index(s) for s in seeds])
        if warm is not None:
            with torch.no_grad():
                for mine, start in zip(model.parameters(), warm.parameters()):
                    mine.copy_(start[row])
        alpha = torch.tensor([c.alpha for c, _ in members], dtype=torch.float32)
        random = torch.tensor([c.random for c, _ in members])
        jitter = torch.tensor([c.jitter for c, _ in members], dtype=torch.float32)
        batch, steps = int(cfg["batch"]), int(cfg["steps_per_epoch"])
        stage_seed = 1000 * self.seed + offset
        lr, total = float(cfg["lr"]), epochs * steps
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)

        def batches(epoch: int) -> list[tuple[torch.Tensor, int]]:
            rng = epoch_rng(stage_seed, epoch)
            idx = torch.as_tensor(rng.integers(0, len(self.seq), size=(steps, len(distinct), batch)))
            return [(step[row], epoch * steps + k) for k, step in enumerate(idx)]

        def loss_fn(model: CoDesigner, item: tuple[torch.Tensor, int]) -> torch.Tensor:
            idx, step = item
            for group in optimizer.param_groups:
                group["lr"] = lr * 0.5 * (1 + math.cos(math.pi * step / total))
            _, t_struct, t_seq = training_times(alpha, random, jitter, batch)
            return loss(model, self.seq[idx], self.x[idx], t_struct, t_seq).sum()

        members_key = [[c.name, c.alpha, c.random, c.jitter, s] for c, s in members]
        train(
            model,
            loss_fn,
            batches,
            epochs=epochs,
            optimizer=optimizer,
            checkpoint=self.checkpoints / f"{name}.pt",
            checkpoint_every=int(cfg["checkpoint_every"]),
            fingerprint=fingerprint_of([self.settings, members_key, self.seed, offset, warm is None], self.code),
            desc=f"geocoupling {name}",
            seed=stage_seed,
            keep_last=True,
        )
        return model

    def generate(self, model: CoDesigner, members: list[tuple[Coupling, int]], n: int, sampling_seed: int):
        """Samples of every member along its own sampling curve: sequences (M, n, W) int8, backbones
        (M, n, W, 3, 3) float32 Å."""
        alpha = torch.tensor([c.sampling_alpha for c, _ in members])
        gen = torch.Generator().manual_seed(sampling_seed)
        seq, x = sample(model, alpha, n, int(self.settings["sampling"]["steps"]), gen)
        flat = x.numpy().astype(np.float64).reshape(-1, x.shape[-1])
        backbones = self.standard.decode(flat, self.width).reshape(*seq.shape, 3, 3)
        return seq.numpy().astype(np.int8), backbones.astype(np.float32)


def main(job) -> None:
    settings = job.params.settings
    data = read_npz(job.input.benchmark)
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise InputError(job.input.benchmark, f"missing arrays {missing}")
    seeds = [int(s) for s in settings["seeds"]]
    jitter, cfg = float(settings["jitter"]), settings["train"]
    trainer = Trainer(data, settings, int(job.params.seed), list(job.input.code), Path(job.params.checkpoints))
    warm = trainer.fit("warm", [(Coupling("warm", 1.0, True, 0.0), s) for s in seeds], int(cfg["warm_epochs"]),
                       WARM, None)  # fmt: skip

    first: dict = {}

    def evaluate(candidates: dict[int, list[float]], r: int) -> dict[int, list[float]]:
        members = [(Coupling(f"search_{np.exp(x):.4g}", float(np.exp(x)), False, jitter), s)
                   for s in seeds for x in candidates[s]]  # fmt: skip
        model = trainer.fit(f"search_round{r}", members, int(cfg["fine_epochs"]), SEARCH + r, warm)
        if r == 0:
            first.update(model=model, members=members)
        seq, bb = trainer.generate(model, members, int(settings["search"]["samples"]), VAL_SAMPLING_SEED + r)
        quality = [trainer.scorer.summary(seq[m], bb[m], "val")["quality"] for m in range(len(members))]
        log.info("search round %d: %s", r, {f"{c.alpha:.3g}/{s}": round(q, 4) for (c, s), q in zip(members, quality)})
        out: dict[int, list[float]] = {s: [] for s in seeds}
        for (_, s), q in zip(members, quality):
            out[s].append(q)
        return out

    trace = search(evaluate, seeds, settings["search"])
    best = trace["search_log_alpha"][np.arange(len(seeds)), np.argmax(trace["search_score"], axis=1)]
    learned = dict(zip(seeds, np.exp(best)))
    members = [
        (named(name, jitter, learned[s] if name == "learned" else None), s)
        for name in settings["couplings"]
        for s in seeds
    ]
    n = int(settings["sampling"]["samples"])
    # a fixed curve of the initial design is the search's round-0 run; the others are trained now
    searched = {(round(c.alpha, 9), s): k for k, (c, s) in enumerate(first["members"])}
    reused = [
        searched.get((round(c.alpha, 9), s)) if c.name != "learned" and not c.random else None for c, s in members
    ]
    fresh = [k for k, r in enumerate(reused) if r is None]
    model = trainer.fit("final", [members[k] for k in fresh], int(cfg["fine_epochs"]), FINAL, warm)
    seq_new, bb_new = trainer.generate(model, [members[k] for k in fresh], n, TEST_SAMPLING_SEED)
    seq_old, bb_old = trainer.generate(first["model"], first["members"], n, TEST_SAMPLING_SEED)
    seq = np.stack([seq_new[fresh.index(k)] if r is None else seq_old[r] for k, r in enumerate(reused)])
    backbone = np.stack([bb_new[fresh.index(k)] if r is None else bb_old[r] for k, r in enumerate(reused)])
    untrained_seq, untrained_backbone = trainer.generate(trainer.network([s for _, s in members]), members, n,
                                                         TEST_SAMPLING_SEED)  # fmt: skip
    alpha = torch.tensor([c.alpha for c, _ in members])
    s, t_struct, t_seq = training_times(
        alpha,
        torch.tensor([c.random for c, _ in members]),
        torch.tensor([c.jitter for c, _ in members]),
        int(settings["time_check_pairs"]),
        torch.Generator().manual_seed(TIMES_SEED),
    )
    with atomic_path(job.output.runs) as tmp:
        np.savez(
            tmp,
            seq=seq,
            backbone=backbone,
            untrained_seq=untrained_seq,
            untrained_backbone=untrained_backbone,
            coupling=np.array([c.name for c, _ in members]),
            from_search=np.array([r is not None for r in reused]),
            seed=np.array([s_ for _, s_ in members]),
            alpha=alpha.numpy().astype(float),
            random=np.array([c.random for c, _ in members]),
            jitter=np.array([c.jitter for c, _ in members]),
            time_s=s.numpy(),
            time_struct=t_struct.numpy(),
            time_seq=t_seq.numpy(),
            learned_alpha=np.array([learned[s_] for s_ in seeds]),
            seeds=np.array(seeds),
            **trace,
        )
    for checkpoint in Path(job.params.checkpoints).glob("*.pt"):
        checkpoint.unlink()  # the output is written: a rerun must not resume from a finished run
