"""Token sequences of each method, L-ImgCoT's step selection, and greedy decoding of the test problems.

Every sequence is ``<bos> question <cot> reasoning <ans> answer <eos>``; methods differ in the reasoning:
nothing (no CoT), every step as text (full CoT), the ``n`` latent codes of a tokenizer (text-AE latents,
ImgCoT), or ImgCoT's codes followed by the ``k`` kept textual steps (L-ImgCoT). The loss covers the reasoning
and the answer; at test time the model writes its own reasoning tokens after ``<cot>``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from repro.papers.imgcot.models import TinyLM

EVAL_SPLITS = ("test", "heldout")
SELECTION_RULES = ("lowest_loglik", "random", "first")


class Encoder:
    """Maps the problem table to token ids for every method."""

    def __init__(self, vocab: list[str], table: pd.DataFrame) -> None:
        self.vocab, self.index = vocab, {t: i for i, t in enumerate(vocab)}
        self.questions = [q.split(" ") for q in table["question"]]
        self.steps = [[s.split(" ") for s in steps] for steps in table["cot_steps"]]
        self.answers = list(table["answer"])
        self.splits = table["split"].to_numpy()
        self.templates = table["template_id"].to_numpy()

    def ids(self, tokens: list[str]) -> list[int]:
        return [self.index[t] for t in tokens]

    def prefix(self, i: int) -> list[int]:
        return self.ids(["<bos>", *self.questions[i], "<cot>"])

    def reasoning(self, i: int, method: str, codes: dict[str, np.ndarray], kept: list[list[int]] | None) -> list[int]:
        text = [t for s in self.steps[i] for t in (*s, ";")]
        if method == "no_cot":
            return []
        if method == "full_cot":
            return self.ids(text)
        latent = [f"z{c}" for c in codes["imgcot" if method.startswith("l_imgcot") else method][i]]
        if method in ("imgcot", "text_ae"):
            return self.ids(latent)
        chosen = [t for j in kept[i] for t in (*self.steps[i][j], ";")]
        return self.ids(latent + chosen)

    def max_len(self, codes: dict[str, np.ndarray], k_max: int = 2) -> int:
        """Longest sequence any method can need (full CoT, or latents plus ``k_max`` steps): one position table."""
        n_latent = max((c.shape[1] for c in codes.values()), default=0)
        step = max(len(s) + 1 for steps in self.steps for s in steps)
        full = max(len(self.prefix(i)) + sum(len(s) + 1 for s in self.steps[i]) for i in range(len(self.steps)))
        return max(full, max(len(self.prefix(i)) for i in range(len(self.steps))) + n_latent + k_max * step) + 3

    def reasoning_lengths(self, method: str, codes: dict, kept: list[list[int]] | None) -> np.ndarray:
        return np.array([len(self.reasoning(i, method, codes, kept)) for i in range(len(self.answers))])

    def sequences(
        self, method: str, codes: dict[str, np.ndarray], kept: list[list[int]] | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(ids, loss weight) padded on the right; the weight is 1 on reasoning, ``<ans>``, answer, ``<eos>``."""
        rows = []
        for i in range(len(self.answers)):
            target = self.reasoning(i, method, codes, kept) + self.ids(["<ans>", self.answers[i], "<eos>"])
            rows.append((self.prefix(i), target))
        width = max(len(p) + len(t) for p, t in rows)
        ids = torch.zeros(len(rows), width, dtype=torch.long)
        weight = torch.zeros(len(rows), width)
        for i, (p, t) in enumerate(rows):
            ids[i, : len(p) + len(t)] = torch.tensor(p + t)
            weight[i, len(p) : len(p) + len(t)] = 1.0
        return ids, weight

    def cot_tensors(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``<bos> step ; step ; ... <eos>`` for the text autoencoder, with a mask of real tokens."""
        seqs = [self.ids(["<bos>", *[t for s in steps for t in (*s, ";")], "<eos>"]) for steps in self.steps]
        width = max(map(len, seqs))
        ids = torch.zeros(len(seqs), width, dtype=torch.long)
        mask = torch.zeros(len(seqs), width)
        for i, s in enumerate(seqs):
            ids[i, : len(s)], mask[i, : len(s)] = torch.tensor(s), 1.0
        return ids, mask

    def step_spans(self, i: int) -> list[tuple[int, int]]:
        """Positions (in the full-CoT sequence) of each step's tokens, its ';' excluded."""
        start, spans = len(self.prefix(i)), []
        for s in self.steps[i]:
            spans.append((start, start + len(s)))
            start += len(s) + 1
        return spans

    def decode(self, model: TinyLM, method: str) -> list[dict]:
        """Greedy answers on the test and held-out problems, batched by prompt length (no padding)."""
        rows = np.flatnonzero(np.isin(self.splits, EVAL_SPLITS))
        eos, ans = self.index["<eos>"], self.index["<ans>"]
        out = []
        lengths = np.array([len(self.prefix(i)) for i in rows])
        with torch.no_grad():
            for length in np.unique(lengths):
                group = rows[lengths == length]
                ids = torch.tensor([self.prefix(i) for i in group])
                done = torch.zeros(len(group), dtype=torch.bool)
                while ids.shape[1] < model.max_len and not bool(done.all()):
                    nxt = model(ids)[:, -1].argmax(-1)
                    nxt = torch.where(done, torch.zeros_like(nxt), nxt)
                    done |= nxt == eos
                    ids = torch.cat([ids, nxt[:, None]], 1)
                for i, row in zip(group, ids[:, length:].tolist()):
                    pred, reasoning = "", len(row)
                    if ans in row:
                        reasoning = row.index(ans)
                        after = row[reasoning + 1 : reasoning + 2]
                        pred = self.vocab[after[0]] if after else ""
                    out.append(
                        {
                            "row": int(i),
                            "split": str(self.splits[i]),
                            "template": int(self.templates[i]),
                            "steps": len(self.steps[i]),
                            "pred": pred,
                            "answer": self.answers[i],
                            "correct": pred == self.answers[i],
                            "generated_tokens": reasoning,
                        }
                    )
        return out


def step_loglik(model: TinyLM, enc: Encoder, chunk: int = 256) -> list[np.ndarray]:
    """Mean token log-likelihood of each textual step of each problem under the full-CoT model."""
    ids, _ = enc.sequences("full_cot", {})
    scores = []
    model.eval()
    with torch.no_grad():
        for start in range(0, len(ids), chunk):
            block = ids[start : start + chunk]
            logp = torch.log_softmax(model(block[:, :-1]), -1).gather(2, block[:, 1:, None])[..., 0]
            for offset in range(len(block)):
                i = start + offset
                scores.append(np.array([float(logp[offset, a - 1 : b - 1].mean()) for a, b in enc.step_spans(i)]))
    return scores


def select_steps(model: TinyLM, enc: Encoder, k: int, rule: str, seed: int) -> list[list[int]]:
    """Indices (in order) of the ``k`` steps L-ImgCoT keeps: lowest mean log-likelihood, or (ablations) random
    or the first ``k``."""
    if rule not in SELECTION_RULES:
        raise ValueError(f"unknown step-selection rule {rule!r}")
    scores = step_loglik(model, enc)
    rng = np.random.default_rng(seed)
    kept = []
    for s in scores:
        if rule == "lowest_loglik":
            chosen = np.argsort(s, kind="stable")[:k]
        elif rule == "random":
            chosen = rng.permutation(len(s))[:k]
        else:
            chosen = np.arange(len(s))[:k]
        kept.append(sorted(int(j) for j in chosen))
    return kept
