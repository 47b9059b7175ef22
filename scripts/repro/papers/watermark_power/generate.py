"""Stage: unwatermarked calibration samples, watermarked samples per (gamma, delta) cell, scored human text.

Every sequence starts from a previous token drawn from held-out human text. Per step we record the
green mass p(G) of the LM's distribution under the keyed list of each gamma, whether the sampled token
is green, the (previous, token) first-occurrence mask used for scoring, and the entropy of p.
"""

from __future__ import annotations

import numpy as np

from repro.papers.watermark_power.lm import first_occurrences, green_ranks, green_size
from repro.papers.watermark_power.theory import green_prob, kl_per_step
from repro.workflow.io import InputError, atomic_path
from repro.workflow.progress import Progress


def load_lm(path: str) -> dict[str, np.ndarray]:
    try:
        lm = dict(np.load(path))
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot read the LM archive ({err})") from err
    missing = [k for k in ("vocab", "P", "train", "heldout") if k not in lm]
    if missing:
        raise InputError(path, f"missing arrays {missing}")
    if not np.allclose(lm["P"].sum(axis=1), 1.0):
        raise InputError(path, "rows of P are not probability distributions")
    return lm


def sample(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    u = rng.random(p.shape[0])[:, None]
    return np.minimum((np.cumsum(p, axis=1) < u).sum(axis=1), p.shape[1] - 1)


def generate(table, log_table, ranks, gammas, watermark, delta, start, length, rng):
    """Sample sequences watermarked with size-gammas[watermark] lists and bias delta (0: none), tracking
    p(G) and green outcomes for every gamma in ``gammas``; per-step records."""
    n, v = start.size, table.shape[0]
    sizes = [green_size(g, v) for g in gammas]
    prev = np.empty((n, length), dtype=np.int64)
    tokens = np.empty((n, length), dtype=np.int64)
    p_green = np.empty((len(gammas), n, length))
    green = np.empty((len(gammas), n, length), dtype=bool)
    entropy = np.empty((n, length))
    current = start.copy()
    for t in range(length):
        p = table[current]
        r = ranks[current]
        for i, size in enumerate(sizes):
            p_green[i, :, t] = np.sum(np.where(r < size, p, 0), axis=1)
        entropy[:, t] = -np.einsum("ij,ij->i", p, log_table[current])
        q = p * np.where(r < sizes[watermark], np.exp(delta), 1.0) if delta else p
        nxt = sample(q / q.sum(axis=1, keepdims=True), rng)
        for i, size in enumerate(sizes):
            green[i, :, t] = r[np.arange(n), nxt] < size
        prev[:, t], tokens[:, t] = current, nxt
        current = nxt
    return {
        "p_green": p_green,
        "green": green,
        "entropy": entropy,
        "scored": first_occurrences(prev, tokens, v),
    }


def kl_identity_error(table: np.ndarray, ranks: np.ndarray, gammas, deltas, rng, n: int) -> float:
    """Largest |closed-form KL - direct sum over the vocabulary| on random contexts, all (gamma, delta)."""
    rows = rng.integers(table.shape[0], size=n)
    worst = 0.0
    for gamma in gammas:
        mask = ranks[rows] < green_size(gamma, table.shape[0])
        p = table[rows]
        p_green = np.sum(np.where(mask, p, 0), axis=1)
        for delta in deltas:
            q = p * np.where(mask, np.exp(delta), 1.0)
            q /= q.sum(axis=1, keepdims=True)
            direct = np.sum(q * np.log(q / p), axis=1)
            worst = max(worst, float(np.max(np.abs(direct - kl_per_step(p_green, delta)))))
            worst = max(
                worst, float(np.max(np.abs(q[mask].sum() / mask.shape[0] - np.mean(green_prob(p_green, delta)))))
            )
    return worst


def main(job) -> None:
    cfg = job.params.settings
    lm = load_lm(job.input.lm)
    table = lm["P"]
    v = table.shape[0]
    gammas, deltas, length, n = cfg["gammas"], cfg["deltas"], max(cfg["lengths"]), cfg["sequences"]
    ranks = green_ranks(cfg["key"], v)
    rng = np.random.default_rng([job.params.seed, 0])
    heldout = lm["heldout"]
    start = heldout[rng.integers(heldout.size - 1, size=n)]
    log_table = np.log(table)
    records = {f"cal_{k}": a for k, a in generate(table, log_table, ranks, gammas, 0, 0.0, start, length, rng).items()}
    cells = {
        k: np.empty((len(gammas), len(deltas)) + records[f"cal_{k}"].shape[-2:], dtype=records[f"cal_{k}"].dtype)
        for k in ("green", "entropy", "scored")
    }
    cells["p_green"] = np.empty((len(gammas), len(deltas), n, length))
    progress = Progress("watermark cells", total=len(gammas) * len(deltas))
    for i in range(len(gammas)):
        for j, delta in enumerate(deltas):
            cell_rng = np.random.default_rng([job.params.seed, 1, i, j])
            rec = generate(table, log_table, ranks, [gammas[i]], 0, delta, start, length, cell_rng)
            cells["green"][i, j], cells["p_green"][i, j] = rec["green"][0], rec["p_green"][0]
            cells["entropy"][i, j], cells["scored"][i, j] = rec["entropy"], rec["scored"]
            progress.update()
    chunks = heldout[: (heldout.size - 1) // (length + 1) * (length + 1)].reshape(-1, length + 1)
    human_prev, human_tok = chunks[:, :-1], chunks[:, 1:]
    human_green = np.stack([ranks[human_prev, human_tok] < green_size(g, v) for g in gammas])
    same_key = bool(np.array_equal(ranks, green_ranks(cfg["key"], v)))
    other_key_overlap = float(np.mean((ranks < v // 2) == (green_ranks(cfg["key"] + 1, v) < v // 2)))
    with atomic_path(job.output.samples) as tmp:
        with open(tmp, "wb") as fh:
            np.savez_compressed(
                fh,
                **records,
                **{f"wm_{k}": a for k, a in cells.items()},
                human_green=human_green,
                human_scored=first_occurrences(human_prev, human_tok, v),
                gammas=np.array(gammas),
                deltas=np.array(deltas),
                kl_identity_error=kl_identity_error(table, ranks, gammas, deltas, rng, cfg["kl_check_contexts"]),
                hash_same_key_equal=same_key,
                hash_other_key_agreement=other_key_overlap,
            )
