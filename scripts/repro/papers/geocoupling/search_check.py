"""A check of the coupling search on the exactly solved HP lattice, where the objective needs no training.

The co-design data are the (sequence, ground-state conformation) pairs of the designable sequences (HP bits
and relative turns, :mod:`repro.papers.geocoupling.lattice`). The denoiser is exact but factorised, as every
masked denoiser is: given the tokens revealed so far, each masked token's distribution is its marginal over
the training pairs that agree with the revealed tokens (the pairs with the fewest disagreements when none
agrees with all), and tokens revealed in the same step are drawn independently. How inconsistent those joint
draws are depends on when each modality's tokens are revealed, that is on the coupling curve
t_seq = t_struct ** alpha; the objective of alpha is the fraction of samples that are valid walks at their
sequence's ground-state energy, computed with common random numbers for every alpha. The check: the GP-EI
search (:func:`repro.papers.geocoupling.bo.search`, the one the generator's search runs) reaches the maximum
that a dense grid of alpha finds, within two binomial standard errors.
"""

from __future__ import annotations

import numpy as np

from repro.papers.geocoupling.bo import search
from repro.papers.geocoupling.lattice import canonical, sequence_int, turn_code


def pair_tokens(lat: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(tokens (P, N + N - 2) of the designable sequences' ground-state pairs, vocabulary size per position)."""
    n = lat["turns"].shape[1] + 2
    seqs = np.flatnonzero(lat["e_min"] <= lat["designable"])
    rows, conf = np.nonzero(lat["energy"][seqs] == lat["e_min"][seqs, None])
    bits = ((seqs[rows, None] >> np.arange(n)[None]) & 1).astype(np.int64)
    tokens = np.concatenate([bits, lat["turns"][conf].astype(np.int64)], axis=1)
    vocab = np.array([2] * n + [3] * (n - 2))
    return tokens, vocab


def sample_curve(tokens: np.ndarray, vocab: np.ndarray, alpha: float, n: int, steps: int, seed: int) -> np.ndarray:
    """n samples (n, T) revealed along t_struct = s, t_seq = s ** alpha by the exact factorised denoiser."""
    rng = np.random.default_rng(seed)
    length = tokens.shape[1]
    residues = int(np.sum(vocab == 2))
    offsets = np.concatenate([[0], np.cumsum(vocab)[:-1]])
    onehot = np.zeros((len(tokens), int(vocab.sum())))
    onehot[np.arange(len(tokens))[:, None], offsets + tokens] = 1.0
    state = np.full((n, length), -1)
    is_seq = np.arange(length) < residues
    for k in range(steps):
        s0, s1 = k / steps, (k + 1) / steps
        clock0 = np.where(is_seq, s0**alpha, s0)
        clock1 = np.where(is_seq, s1**alpha, s1)
        reveal_p = np.where(clock0 < 1, (clock1 - clock0) / np.maximum(1 - clock0, 1e-12), 1.0)
        if k == steps - 1:
            reveal_p = np.ones(length)
        u_reveal, u_draw = rng.random((n, length)), rng.random((n, length))  # common random numbers
        shown = np.zeros((n, int(vocab.sum())))
        rows, cols = np.nonzero(state >= 0)
        shown[rows, offsets[cols] + state[rows, cols]] = 1.0
        disagree = (state >= 0).sum(1, keepdims=True) - shown @ onehot.T  # (n, P)
        weight = (disagree == disagree.min(1, keepdims=True)).astype(float)
        marginals = weight @ onehot / weight.sum(1, keepdims=True)  # (n, sum vocab)
        for t in range(length):
            hidden = state[:, t] < 0
            reveal = hidden & (u_reveal[:, t] < reveal_p[t])
            cdf = np.cumsum(marginals[:, offsets[t] : offsets[t] + vocab[t]], axis=1)
            drawn = np.minimum((u_draw[:, t : t + 1] > cdf).sum(1), vocab[t] - 1)
            state[reveal, t] = drawn[reveal]
    return state


def consistency(samples: np.ndarray, lat: dict[str, np.ndarray]) -> float:
    """Fraction of samples whose turns form a valid walk at the sequence's ground-state energy."""
    residues = lat["turns"].shape[1] + 2
    seq = sequence_int(samples[:, :residues])
    conf = lat["index_of_code"][turn_code(canonical(samples[:, residues:]))]
    valid = conf >= 0
    energy = np.where(valid, lat["energy"][seq, np.maximum(conf, 0)], 0)
    return float(np.mean(valid & (energy == lat["e_min"][seq])))


def check(lat: dict[str, np.ndarray], cfg: dict, search_cfg: dict, seed: int) -> dict:
    """Grid of the objective over alpha, the GP-EI search's pick, and how far the pick falls below the grid best."""
    tokens, vocab = pair_tokens(lat)
    n, steps = int(cfg["samples"]), int(cfg["steps"])

    def objective(alpha: float) -> float:
        return consistency(sample_curve(tokens, vocab, alpha, n, steps, seed), lat)

    low, high = np.log(search_cfg["alpha_range"][0]), np.log(search_cfg["alpha_range"][1])
    grid = np.exp(np.linspace(low, high, int(cfg["grid"])))
    grid_scores = np.array([objective(a) for a in grid])
    trace = search(lambda candidates, _round: {0: [objective(float(np.exp(x))) for x in candidates[0]]}, [0],
                   search_cfg)  # fmt: skip
    scores = np.asarray(trace["search_score"][0])
    pick = float(np.exp(trace["search_log_alpha"][0][int(np.argmax(scores))]))
    best = float(grid_scores.max())
    standard_error = float(np.sqrt(max(best * (1 - best), 1e-12) / n))
    return {
        "pairs": int(len(tokens)),
        "samples": n,
        "grid_alpha": grid.tolist(),
        "grid_score": grid_scores.tolist(),
        "search_alpha": np.exp(trace["search_log_alpha"][0]).tolist(),
        "search_score": scores.tolist(),
        "picked_alpha": pick,
        "picked_score": float(scores.max()),
        "grid_best_alpha": float(grid[int(np.argmax(grid_scores))]),
        "grid_best_score": best,
        "grid_spread": float(grid_scores.max() - grid_scores.min()),
        "shortfall_in_standard_errors": float((best - scores.max()) / standard_error),
    }
