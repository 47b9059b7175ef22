"""The synthetic benchmark with a planted synergistic property (brief section 5).

Each item has a "text" and an "image" feature vector. Both carry a shared property (a 2-D cluster position),
each carries a property of its own, and the synergistic bit s = sign(t_syn) * sign(v_syn) is visible only from
the two modalities together: each of t_syn and v_syn alone is independent of s. Users have a preference over
the shared and specific properties and, with the synergy switch on, a preferred value of s; histories follow a
preference-driven Markov process (the next item is drawn without repetition with probability proportional to
exp(beta * utility), the utility including closeness to the previous item's shared property). With the switch
off (``synergy_weight: 0``, the control condition) s plays no part in any choice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Benchmark:
    """Items' modality features, users' chronological item sequences, and the planted synergistic bit."""

    text: np.ndarray  # (n_items, dim) float32
    image: np.ndarray  # (n_items, dim) float32
    synergy: np.ndarray  # (n_items,) in {-1, +1}
    sequences: list[np.ndarray]  # per user, item indices in time order


def items(rng: np.random.Generator, n_items: int, dim: int, noise: float, clusters: int) -> tuple:
    """Text and image features (dims: 0-1 shared, 2-3 specific, 4 synergy coordinate, rest noise) and s."""
    if dim < 6:
        raise ValueError(f"feature dim must be at least 6, got {dim}")
    centres = rng.normal(0.0, 1.5, size=(clusters, 2))
    shared = centres[rng.integers(clusters, size=n_items)] + rng.normal(0.0, 0.3, size=(n_items, 2))
    signs_t, signs_v = rng.choice([-1.0, 1.0], size=(2, n_items))
    synergy = signs_t * signs_v

    def modality() -> tuple[np.ndarray, np.ndarray]:
        specific = rng.normal(0.0, 1.0, size=(n_items, 2))
        return specific, rng.normal(0.0, noise, size=(n_items, dim))

    spec_t, x_t = modality()
    spec_v, x_v = modality()
    x_t[:, :2] += shared
    x_v[:, :2] += shared
    x_t[:, 2:4] += spec_t
    x_v[:, 2:4] += spec_v
    x_t[:, 4] += 1.5 * signs_t
    x_v[:, 4] += 1.5 * signs_v
    return x_t.astype(np.float32), x_v.astype(np.float32), synergy, shared, spec_t, spec_v


def generate(settings: dict, seed: int, synergy_weight: float) -> Benchmark:
    """One benchmark: ``settings`` holds items, dim, noise, clusters, users, min/max length, beta and weights."""
    rng = np.random.default_rng(seed)
    text, image, synergy, shared, spec_t, spec_v = items(
        rng, settings["items"], settings["dim"], settings["noise"], settings["clusters"]
    )
    w = settings["weights"]
    sequences = []
    for _ in range(settings["users"]):
        pref_shared, pref_t, pref_v = (v / np.linalg.norm(v) for v in rng.normal(size=(3, 2)))
        prefers = rng.choice([-1.0, 1.0])
        utility = (
            w["shared"] * shared @ pref_shared
            + w["text"] * spec_t @ pref_t
            + w["image"] * spec_v @ pref_v
            + synergy_weight * prefers * synergy
        )
        length = int(rng.integers(settings["min_length"], settings["max_length"] + 1))
        seen = np.zeros(len(text), dtype=bool)
        current = int(rng.choice(len(text), p=_softmax(settings["beta"] * utility)))
        seq = [current]
        for _ in range(length - 1):
            seen[current] = True
            closeness = -np.sum((shared - shared[current]) ** 2, axis=1)
            logits = settings["beta"] * (utility + w["transition"] * closeness)
            logits[seen] = -np.inf
            current = int(rng.choice(len(text), p=_softmax(logits)))
            seq.append(current)
        sequences.append(np.array(seq, dtype=np.int64))
    return Benchmark(text, image, synergy.astype(np.int8), sequences)


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - np.max(logits))
    return z / z.sum()
