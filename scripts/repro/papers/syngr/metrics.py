"""Leave-one-out ranking metrics from the rank of each user's single target in the generated list.

``rank`` is 0-based, -1 when the target was not generated. HR@K (= Recall@K with one target) is the share of
users with rank < K; NDCG@K averages 1/log2(rank + 2) over those users (the ideal DCG of one target is 1).
"""

from __future__ import annotations

import numpy as np


def target_ranks(ranked: np.ndarray, target: np.ndarray) -> np.ndarray:
    """(N,) 0-based position of ``target[n]`` in ``ranked[n]`` (N, L), -1 where absent."""
    hit = ranked == target[:, None]
    return np.where(hit.any(1), hit.argmax(1), -1)


def hit_rate(rank: np.ndarray, k: int) -> float:
    return float(np.mean((rank >= 0) & (rank < k)))


def ndcg(rank: np.ndarray, k: int) -> float:
    gain = np.where((rank >= 0) & (rank < k), 1.0 / np.log2(np.maximum(rank, 0) + 2.0), 0.0)
    return float(np.mean(gain))
