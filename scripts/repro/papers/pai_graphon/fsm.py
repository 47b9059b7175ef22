"""The Factorised Saliency Model (FSM) and the limit graphon it predicts for a layer's mask.

FSM: the saliency of edge (i, j) factorises as s_ij = a_i b_j r_ij, with a latent a_i > 0 of the output node,
b_j > 0 of the input node, and r_ij i.i.d. from one law R that does not depend on the position (it carries
the random weight and the per-edge noise of the batch gradient). Every criterion is of this form:

- Random: s = u (uniform), a = b = 1, R = U(0, 1);
- Magnitude: s = |w|, a = b = 1, R = |N(0, sigma^2)|;
- SNIP: s = |w g| with g_ij = sum over the batch of delta_i h_j: a_i is the scale of node i's backpropagated
  signal, b_j of node j's activation, R = |w zeta| with zeta the normalised gradient noise;
- GraSP: s = w (H g) (signed; the largest are kept), the same reading with a signed R.

With layer-wise top-p thresholding at t (the score of the last kept edge), edge (i, j) is kept with
probability P_ij = P(R > t / (a_i b_j)), and the limit graphon is W(u, v) = P(R > t / (a(u) b(v))) with a(u),
b(v) the quantile functions of the latents (descending, as degree sorting orders the nodes: the predicted
degree of a node grows with its latent).

Estimation from one layer's scores (what ``keep_probability`` does): the latents from the rank-one fit of
the squared scores, a_i^2 b_j^2 = E[s_ij^2 | i] E[s_ij^2 | j] / E[s^2] (row and column mean squares), the law
R from the pooled normalised scores r_ij = s_ij / (a_i b_j), t from the mask's own threshold. A row's mean
square over m finite entries carries sampling noise of relative variance var(s^2) / (m E[s^2]^2); the limit
graphon needs the latents' own spread, so the log mean squares are shrunk towards their mean by the share of
their variance that is not this noise (method of moments; for i.i.d. scores the latents become constant and
the prediction the flat graphon p). A criterion whose
scores have position structure beyond a rank-one scale (a block pattern, a sign correlated with position)
violates the model, and its prediction then misses the mask's degree-sorted graphon at every width.
"""

from __future__ import annotations

import numpy as np

from repro.papers.pai_graphon.graphon import block_average


def _denoised_scale(sq: np.ndarray, axis: int) -> np.ndarray:
    """Mean squares along ``axis`` with their log spread shrunk to its part beyond the sampling noise. Nodes whose
    scores are all 0 (a ReLU unit dead on the whole scoring batch) keep scale 0: they can keep no edge."""
    m = np.mean(sq, axis=axis)
    live = m > 0
    noise = np.var(sq, axis=axis)[live] / (sq.shape[axis] * m[live] ** 2)  # variance of log m from finite sampling
    log_m = np.log(m[live])
    spread = np.var(log_m)
    shrink = np.sqrt(np.maximum(spread - np.mean(noise), 0.0) / spread) if spread > 0 else 0.0
    out = np.zeros_like(m)
    out[live] = np.exp(np.mean(log_m) + shrink * (log_m - np.mean(log_m)))
    return out


def latents(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a, b): output- and input-node latents from the rank-one fit of the squared scores (up to a common
    scale, which the prediction does not depend on), denoised."""
    sq = np.asarray(scores, dtype=float) ** 2
    return np.sqrt(_denoised_scale(sq, 1)), np.sqrt(_denoised_scale(sq, 0))


def keep_probability(scores: np.ndarray, density: float) -> np.ndarray:
    """P_ij = P(R > t / (a_i b_j)) under the FSM fitted to ``scores`` (rows: output nodes), top-``density`` rule."""
    s = np.asarray(scores, dtype=float)
    k = max(1, int(round(density * s.size)))
    threshold = np.partition(s.ravel(), s.size - k)[s.size - k]
    a, b = latents(s)
    scale = np.outer(a, b)
    live = scale > 0
    pooled = np.sort(s[live] / scale[live])
    # survival function of R at t / (a_i b_j), from the pooled normalised scores; dead nodes keep nothing
    prob = np.zeros_like(s)
    prob[live] = 1.0 - np.searchsorted(pooled, threshold / scale[live], side="left") / pooled.size
    return prob


def predicted_graphon(scores: np.ndarray, density: float, blocks: int) -> np.ndarray:
    """The FSM's block graphon: keep probabilities with nodes ordered by predicted degree (highest first)."""
    prob = keep_probability(scores, density)
    rows = np.argsort(-prob.sum(axis=1), kind="stable")
    cols = np.argsort(-prob.sum(axis=0), kind="stable")
    return block_average(prob, blocks, rows, cols)
