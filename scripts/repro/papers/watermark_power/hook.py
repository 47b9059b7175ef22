"""The green-list watermark as a logits hook for the language source's generation (a real LM's logits).

At each step the hook removes the suppressed tokens (control tokens: generations are exactly T tokens of
text), records the green mass p(G) and the entropy of the distribution the model proposes (its raw logits at
temperature 1), and adds delta to the logits of the keyed green list of the previous token (delta 0: records
only, for unwatermarked text). The green list is the same keyed hash as the n-gram path (``lm.green_mask``).
"""

from __future__ import annotations

import numpy as np
import torch

from repro.papers.watermark_power.lm import green_mask


class GreenListHook:
    """KGW watermark with exact green-list size gamma V; a ``repro.data.language.generate.LogitsHook``."""

    def __init__(self, key: int, gamma: float, delta: float, suppress: list[int]) -> None:
        self.key, self.gamma, self.delta, self.suppress = int(key), float(gamma), float(delta), sorted(suppress)
        self.begin(0)

    def key_fields(self) -> dict:
        return {
            "watermark": "kgw-splitmix64",
            "key": self.key,
            "gamma": self.gamma,
            "delta": self.delta,
            "suppress": self.suppress,
        }

    def begin(self, batch: int) -> None:
        self.p_green: list[torch.Tensor] = []
        self.entropy: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        scores = scores.clone()
        scores[:, self.suppress] = -torch.inf
        prev = input_ids[:, -1].numpy()
        mask = torch.from_numpy(green_mask(self.key, prev, scores.shape[1], self.gamma))
        p = torch.softmax(scores.float(), dim=-1)
        self.p_green.append(torch.where(mask, p, 0.0).sum(dim=-1))
        self.entropy.append(torch.special.entr(p).sum(dim=-1))
        return torch.where(mask, scores + self.delta, scores) if self.delta else scores

    def extras(self, row: int, length: int) -> dict:
        return {
            "p_green": [float(x[row]) for x in self.p_green[:length]],
            "entropy": [float(x[row]) for x in self.entropy[:length]],
        }


def records_to_arrays(records: list[dict], last_prompt_tokens: list[int], length: int) -> dict[str, np.ndarray]:
    """Stack memo records (tokens and the hook's per-step extras) into (n, T) arrays, with each token's
    previous token (the prompt's last token before the first)."""
    short = [i for i, r in enumerate(records) if len(r["tokens"]) < length or len(r["p_green"]) < length]
    if short:
        raise ValueError(f"generations {short} are shorter than {length} tokens")
    tokens = np.array([r["tokens"][:length] for r in records], dtype=np.int64)
    prev = np.concatenate([np.array(last_prompt_tokens, dtype=np.int64)[:, None], tokens[:, :-1]], axis=1)
    return {
        "tokens": tokens,
        "prev": prev,
        "p_green": np.array([r["p_green"][:length] for r in records]),
        "entropy": np.array([r["entropy"][:length] for r in records]),
    }
