"""Exact scores of generated HP-lattice (sequence, conformation) pairs against the enumerated solution."""

from __future__ import annotations

import numpy as np

from repro.papers.geocoupling.lattice import canonical, sequence_int, turn_code


def pair_codes(seq_ints: np.ndarray, conf_index: np.ndarray, n_conf: int) -> np.ndarray:
    """One integer per (sequence, conformation) pair."""
    return np.asarray(seq_ints, dtype=np.int64) * n_conf + np.asarray(conf_index, dtype=np.int64)


def mean_pairwise_hamming(bits: np.ndarray) -> float:
    """Mean Hamming distance over all pairs of rows, as a fraction of the length (0/1 rows)."""
    n, length = bits.shape
    if n < 2:
        return float("nan")
    ones = bits.sum(0).astype(float)
    return float(np.sum(2 * ones * (n - ones)) / (n * (n - 1)) / length)


def score_samples(
    seq_bits: np.ndarray,
    turns: np.ndarray,
    energy: np.ndarray,
    e_min: np.ndarray,
    index_of_code: np.ndarray,
    train_pairs: np.ndarray,
    designable: int,
) -> dict[str, float]:
    """Validity, consistency (valid walk at the sequence's ground-state energy), diversity and novelty.

    ``train_pairs`` holds :func:`pair_codes` of the training set; ``designable`` is the E_min threshold
    of the training sequences (consistency among samples whose sequence is that stable is reported too).
    """
    seq = sequence_int(seq_bits)
    conf = index_of_code[turn_code(canonical(turns))]
    valid = conf >= 0
    e = np.where(valid, energy[seq, np.maximum(conf, 0)], 0)
    consistent = valid & (e == e_min[seq])
    codes = pair_codes(seq, conf, energy.shape[1])
    n = len(seq)
    return {
        "validity": float(np.mean(valid)),
        "consistency": float(np.mean(consistent)),
        "designable_consistency": float(np.mean(consistent & (e_min[seq] <= designable))),
        "unique_pairs": float(np.unique(codes[valid]).size / n),
        "unique_sequences": float(np.unique(seq).size / n),
        "unique_conformations": float(np.unique(conf[valid]).size / n),
        "sequence_hamming": mean_pairwise_hamming(seq_bits),
        "novelty": float(np.mean(valid & ~np.isin(codes, train_pairs))),
    }


def scorer(data: dict[str, np.ndarray]):
    """The scoring function of the benchmark the data stage wrote: (seq tokens, struct tokens) -> metrics."""
    if str(data["benchmark"]) == "chains":
        from repro.papers.geocoupling.chains import ChainScorer

        return ChainScorer(data)
    train_pairs = pair_codes(sequence_int(data["train_seq"]), data["train_conf"], data["energy"].shape[1])

    def score(seq: np.ndarray, struct: np.ndarray) -> dict[str, float]:
        return score_samples(
            seq, struct, data["energy"], data["e_min"], data["index_of_code"], train_pairs, int(data["designable"])
        )

    return score
