"""Stage: the bi-level coupling search and the final comparison, all members trained as stacks.

Inner loop: a :class:`CoDesigner` per candidate curve trained with :func:`repro.learning.training.train`. Outer
loop, per seed: a GP surrogate of validation consistency (samples generated along the candidate's own
curve, from a validation sampling seed) over log(alpha) picks the next curves by expected improvement.
The selected alpha (best validation consistency) is the learned coupling. The final stack trains
synchronous, random, the fixed curves and the learned curve for every seed with one budget and
generates the test samples from a separate sampling seed. Every training run keeps a checkpoint, so a
rerun after an interruption resumes and ends with the same samples.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import torch

from repro.learning.training import epoch_rng, fingerprint_of, train
from repro.papers.geocoupling.bo import propose
from repro.papers.geocoupling.coupling import Coupling, named
from repro.papers.geocoupling.metrics import scorer
from repro.papers.geocoupling.model import CoDesigner, masked_loss, sample, training_times
from repro.workflow.io import InputError, atomic_path, read_npz

log = logging.getLogger(__name__)
VAL_SAMPLING_SEED, TEST_SAMPLING_SEED, VAL_LOSS_SEED, TIMES_SEED = 1001, 2002, 3003, 4004
REQUIRED = ("benchmark", "train_seq", "train_struct", "val_seq", "val_struct", "seq_vocab", "struct_vocab")


class Stack:
    """Training data and settings shared by every stack of (coupling, seed) members."""

    def __init__(self, data: dict[str, np.ndarray], settings: dict, seed: int, code: list[str], checkpoints: Path):
        self.data, self.settings, self.seed, self.code, self.checkpoints = data, settings, seed, code, checkpoints
        self.seq = torch.as_tensor(data["train_seq"], dtype=torch.long)
        self.struct = torch.as_tensor(data["train_struct"], dtype=torch.long)
        self.val_seq = torch.as_tensor(data["val_seq"], dtype=torch.long)
        self.val_struct = torch.as_tensor(data["val_struct"], dtype=torch.long)
        self.score = scorer(data)
        self.vocab = int(data["seq_vocab"]), int(data["struct_vocab"])

    def fit(self, name: str, members: list[tuple[Coupling, int]]) -> CoDesigner:
        """Train one stack (checkpointed under ``name``); each member keeps its best held-out-loss weights."""
        cfg, model_cfg = self.settings["train"], self.settings["model"]
        seeds = [s for _, s in members]
        model = CoDesigner(
            seeds, self.seq.shape[1], self.vocab[0], self.struct.shape[1], self.vocab[1], int(model_cfg["hidden"])
        )
        alpha = torch.tensor([c.alpha for c, _ in members], dtype=torch.float32)
        random = torch.tensor([c.random for c, _ in members])
        jitter = torch.tensor([c.jitter for c, _ in members], dtype=torch.float32)
        distinct = sorted(set(seeds))
        row = torch.tensor([distinct.index(s) for s in seeds])
        batch, steps = int(cfg["batch"]), int(cfg["steps_per_epoch"])

        def batches(epoch: int) -> list[torch.Tensor]:
            rng = epoch_rng(self.seed, epoch)
            # One draw per distinct seed: members of the same seed see the same examples (paired comparison).
            idx = torch.as_tensor(rng.integers(0, len(self.seq), size=(steps, len(distinct), batch)))
            return [step[row] for step in idx]

        def loss_fn(model: CoDesigner, idx: torch.Tensor) -> torch.Tensor:
            _, t_struct, t_seq = training_times(alpha, random, jitter, batch)
            return masked_loss(model, self.seq[idx], self.struct[idx], t_struct, t_seq).sum()

        def validate(model: CoDesigner) -> torch.Tensor:
            gen = torch.Generator().manual_seed(VAL_LOSS_SEED)
            m, n = len(members), len(self.val_seq)
            _, t_struct, t_seq = training_times(alpha, random, jitter, n, gen)
            seq, struct = self.val_seq.expand(m, -1, -1), self.val_struct.expand(m, -1, -1)
            return masked_loss(model, seq, struct, t_struct, t_seq, gen)

        members_key = [[c.name, c.alpha, c.random, c.jitter, s] for c, s in members]
        train(
            model,
            loss_fn,
            batches,
            epochs=int(cfg["epochs"]),
            optimizer=torch.optim.Adam(model.parameters(), lr=float(cfg["lr"])),
            validate=validate,
            checkpoint=self.checkpoints / f"{name}.pt",
            checkpoint_every=int(cfg["checkpoint_every"]),
            fingerprint=fingerprint_of([self.settings, members_key, self.seed], self.code),
            desc=f"geocoupling {name}",
            seed=self.seed,
        )
        return model

    def generate(self, model: CoDesigner, members: list[tuple[Coupling, int]], sampling_seed: int):
        """Samples (M, n, L) of sequence bits and turns, each member along its own sampling curve."""
        cfg = self.settings["sampling"]
        alpha = torch.tensor([c.sampling_alpha for c, _ in members])
        gen = torch.Generator().manual_seed(sampling_seed)
        seq, struct = sample(model, alpha, int(cfg["samples"]), int(cfg["steps"]), gen)
        return seq.numpy().astype(np.int8), struct.numpy().astype(np.int8)

    def consistency(self, seq: np.ndarray, struct: np.ndarray) -> np.ndarray:
        return np.array([self.score(seq[m], struct[m])["consistency"] for m in range(len(seq))])


def search(stack: Stack, seeds: list[int]) -> dict[str, np.ndarray]:
    """Per seed, the GP-EI search over log(alpha): every evaluated alpha, its validation consistency, its round."""
    cfg, jitter = stack.settings["search"], float(stack.settings["jitter"])
    low, high = np.log(cfg["alpha_range"][0]), np.log(cfg["alpha_range"][1])
    xs = {s: [] for s in seeds}
    ys = {s: [] for s in seeds}
    rounds = {s: [] for s in seeds}
    candidates = {s: [float(np.log(a)) for a in cfg["initial"]] for s in seeds}
    for r in range(int(cfg["rounds"]) + 1):
        members = [
            (Coupling(f"search_{np.exp(x):.4g}", float(np.exp(x)), False, jitter), s)
            for s in seeds
            for x in candidates[s]
        ]
        model = stack.fit(f"search_round{r}", members)
        seq, struct = stack.generate(model, members, VAL_SAMPLING_SEED + r)
        scores = stack.consistency(seq, struct)
        for (coupling, s), score in zip(members, scores):
            xs[s].append(float(np.log(coupling.alpha)))
            ys[s].append(float(score))
            rounds[s].append(r)
        log.info(
            "search round %d: %s", r, {f"{c.alpha:.3g}/{s}": round(float(v), 4) for (c, s), v in zip(members, scores)}
        )
        if r < int(cfg["rounds"]):
            candidates = {s: propose(np.array(xs[s]), np.array(ys[s]), low, high, int(cfg["per_round"])) for s in seeds}
    return {
        "search_log_alpha": np.array([xs[s] for s in seeds]),
        "search_score": np.array([ys[s] for s in seeds]),
        "search_round": np.array([rounds[s] for s in seeds]),
    }


def main(job) -> None:
    settings = job.params.settings
    torch.set_num_threads(max(1, int(job.threads)))
    data = read_npz(job.input.benchmark)
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise InputError(job.input.benchmark, f"missing arrays {missing}")
    seeds = [int(s) for s in settings["seeds"]]
    stack = Stack(data, settings, int(job.params.seed), list(job.input.code), Path(job.params.checkpoints))
    trace = search(stack, seeds)
    best = trace["search_log_alpha"][np.arange(len(seeds)), np.argmax(trace["search_score"], axis=1)]
    learned = dict(zip(seeds, np.exp(best)))
    jitter = float(settings["jitter"])
    members = [
        (named(name, jitter, learned[s] if name == "learned" else None), s)
        for name in settings["couplings"]
        for s in seeds
    ]
    model = stack.fit("final", members)
    seq, struct = stack.generate(model, members, TEST_SAMPLING_SEED)
    alpha = torch.tensor([c.alpha for c, _ in members])
    gen = torch.Generator().manual_seed(TIMES_SEED)
    s, t_struct, t_seq = training_times(
        alpha,
        torch.tensor([c.random for c, _ in members]),
        torch.tensor([c.jitter for c, _ in members]),
        int(settings["time_check_pairs"]),
        gen,
    )
    with atomic_path(job.output.runs) as tmp:
        np.savez(
            tmp,
            seq=seq,
            struct=struct,
            coupling=np.array([c.name for c, _ in members]),
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
