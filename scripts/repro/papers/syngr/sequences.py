"""Token sequences of every variant: semantic-ID vocabulary, leave-one-out samples and the prefix trie.

An item in a history occupies the codes of the variant's modalities (the paper: 4 text codes then 4 image
codes); the decoder generates the target's codes plus a disambiguation code. Every (modality, level) has its own
token range, so equal code numbers of different levels or modalities are different tokens. Leave-one-out per
user: the last item is the test target, the second-to-last the validation target, and every earlier position
with its preceding ``history`` items is a training sample (histories left-padded).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repro.papers.syngr.codes import disambiguate

PAD, BOS = 0, 1
MODALITY_BLOCKS = {"text": ("text",), "image": ("image",), "fused": ("fused",), "concat": ("text", "image")}
VARIANTS = {"text": "text", "image": "image", "fused": "fused", "concat": "concat", "syngr": "concat"}


@dataclass(frozen=True)
class Tokens:
    """One variant's tokenisation of a benchmark."""

    item_tokens: np.ndarray  # (n_items, P) history tokens of each item
    target_tokens: np.ndarray  # (n_items, T) generated ID of each item (codes + disambiguation)
    modality: np.ndarray  # (P,) index of the modality block of each history token
    vocab: int


def tokenise(codes: dict[str, np.ndarray], variant: str) -> Tokens:
    """History tokens and target IDs of ``variant`` from per-modality code tables (n_items, levels)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {sorted(VARIANTS)}")
    blocks = MODALITY_BLOCKS[VARIANTS[variant]]
    offset, columns, modality = BOS + 1, [], []
    for b, name in enumerate(blocks):
        table = codes[name]
        for level in range(table.shape[1]):
            columns.append(offset + table[:, level])
            offset += int(table[:, level].max()) + 1
            modality.append(b)
    item_tokens = np.stack(columns, axis=1)
    ids = disambiguate(np.concatenate([codes[name] for name in blocks], axis=1))
    dis = offset + ids[:, -1]
    target = np.concatenate([item_tokens, dis[:, None]], axis=1)
    return Tokens(item_tokens, target, np.array(modality, dtype=np.int64), int(dis.max()) + 1)


@dataclass(frozen=True)
class Samples:
    """(history, target item) pairs: ``history`` (N, H) item indices left-padded with -1, ``target`` (N,)."""

    history: np.ndarray
    target: np.ndarray


def leave_one_out(sequences: list[np.ndarray], history: int) -> dict[str, Samples]:
    """Train / valid / test samples; users with fewer than 3 items are left out of every split."""
    out: dict[str, tuple[list, list]] = {"train": ([], []), "valid": ([], []), "test": ([], [])}

    def add(split: str, seq: np.ndarray, j: int) -> None:
        past = seq[max(0, j - history) : j]
        out[split][0].append(np.concatenate([np.full(history - len(past), -1), past]))
        out[split][1].append(seq[j])

    for seq in sequences:
        n = len(seq)
        if n < 3:
            continue
        for j in range(1, n - 2):
            add("train", seq, j)
        add("valid", seq, n - 2)
        add("test", seq, n - 1)
    return {
        k: Samples(np.array(h, dtype=np.int64).reshape(-1, history), np.array(t, dtype=np.int64))
        for k, (h, t) in out.items()
    }


def encode_history(history: np.ndarray, tokens: Tokens) -> tuple[np.ndarray, np.ndarray]:
    """(N, H*P) source tokens (PAD for padded items) and (H*P,) modality block of each position."""
    n, h = history.shape
    p = tokens.item_tokens.shape[1]
    src = np.where(history[..., None] >= 0, tokens.item_tokens[np.maximum(history, 0)], PAD)
    return src.reshape(n, h * p), np.tile(tokens.modality, h)


def decoder_io(target: np.ndarray, tokens: Tokens) -> tuple[np.ndarray, np.ndarray]:
    """Teacher-forcing decoder input ([BOS] + ID[:-1]) and output (the ID) of each target item."""
    ids = tokens.target_tokens[target]
    return np.concatenate([np.full((len(ids), 1), BOS), ids[:, :-1]], axis=1), ids


@dataclass(frozen=True)
class Trie:
    """Prefix trie of the valid IDs: ``children[node, token]`` is the child node or -1; ``item[leaf]`` the item."""

    children: np.ndarray
    item: np.ndarray


def build_trie(target_tokens: np.ndarray, vocab: int) -> Trie:
    """Trie of every item's ID (all IDs have the same length); node 0 is the root."""
    children = [np.full(vocab, -1, dtype=np.int64)]
    item = [-1]
    for i, row in enumerate(target_tokens):
        node = 0
        for tok in row:
            if children[node][tok] < 0:
                children[node][tok] = len(children)
                children.append(np.full(vocab, -1, dtype=np.int64))
                item.append(-1)
            node = children[node][tok]
        if item[node] >= 0:
            raise ValueError(f"items {item[node]} and {i} have the same ID")
        item[node] = i
    return Trie(np.stack(children), np.array(item, dtype=np.int64))
