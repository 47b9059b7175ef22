"""SurvSHAP-IQ: Shapley interactions of time-indexed functions by exact enumeration over coalitions.

For each time t of a grid the game is nu_t(S) = mean over background rows b of f(x_S, b_-S, t) (marginal /
interventional decomposition). Coalitions are bit masks over the p features. The Moebius transform
m_t(S) = sum_{T subset S} (-1)^{|S|-|T|} nu_t(T) is the pure functional component f_S(x_S, t); k-SII comes
from the Shapley interaction index SII_S = sum_{T superset S} m(T) / (|T| - |S| + 1) through the Bernoulli
aggregation of Bord et al. (top order = SII; lower orders add B_l-weighted higher SII), which for p = 3,
k = 2 gives phi_i = m(i) - m(123)/6 and phi_ij = m(ij) + m(123)/2. Order k = 1 is SurvSHAP(t), the Shapley
value of each feature over time. Working from the Moebius sums avoids the paper's Eq. (10) pitfall (that
identity holds for the top order only).
"""

from __future__ import annotations

from collections.abc import Callable
from math import comb

import numpy as np

BERNOULLI = (1.0, -0.5, 1.0 / 6.0, 0.0, -1.0 / 30.0, 0.0, 1.0 / 42.0, 0.0, -1.0 / 30.0)


def popcount(masks: np.ndarray) -> np.ndarray:
    return np.array([bin(int(m)).count("1") for m in np.ravel(masks)], dtype=int).reshape(np.shape(masks))


def coalition_inputs(x: np.ndarray, background: np.ndarray, features: np.ndarray | None = None) -> np.ndarray:
    """Rows (2^k, n_x, n_b, p): features of coalition S (bits over ``features``) from x, all others from b."""
    p = x.shape[1]
    features = np.arange(p) if features is None else np.asarray(features)
    k = features.size
    rows = np.broadcast_to(background[None, None], (2**k, x.shape[0], *background.shape)).copy()
    for mask in range(2**k):
        cols = features[[bool(mask >> j & 1) for j in range(k)]]
        rows[mask][:, :, cols] = x[:, None, cols]
    return rows


def game(
    f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, background: np.ndarray, features: np.ndarray | None = None
) -> np.ndarray:
    """nu (2^k, n_x, T): mean over background of f on coalition inputs; f maps (rows, p) -> (rows, T)."""
    rows = coalition_inputs(x, background, features)
    values = f(rows.reshape(-1, x.shape[1]))
    return values.reshape(*rows.shape[:3], -1).mean(axis=2)


def moebius(nu: np.ndarray) -> np.ndarray:
    """Moebius transform over the leading coalition axis (fast subset-difference transform)."""
    m = np.array(nu, dtype=float, copy=True)
    k = int(np.log2(m.shape[0]))
    for j in range(k):
        bit = 1 << j
        for mask in range(m.shape[0]):
            if mask & bit:
                m[mask] -= m[mask ^ bit]
    return m


def sii(m: np.ndarray) -> np.ndarray:
    """Shapley interaction index of every coalition from the Moebius coefficients."""
    sizes = popcount(np.arange(m.shape[0]))
    out = np.zeros_like(m)
    for s in range(m.shape[0]):
        for t in range(m.shape[0]):
            if t & s == s:
                out[s] += m[t] / (sizes[t] - sizes[s] + 1)
    return out


def k_sii(m: np.ndarray, order: int) -> dict[int, np.ndarray]:
    """{coalition mask: phi_S} for every non-empty S with |S| <= order (k-SII; order 1 is the Shapley value)."""
    if order >= len(BERNOULLI):
        raise ValueError(f"order {order} exceeds the tabulated Bernoulli numbers")
    index = sii(m)
    sizes = popcount(np.arange(m.shape[0]))
    out = {}
    for s in range(1, m.shape[0]):
        if sizes[s] > order:
            continue
        phi = np.zeros_like(m[0])
        for t in range(m.shape[0]):
            extra = sizes[t] - sizes[s]
            if t & s == s and extra <= order - sizes[s]:
                phi = phi + BERNOULLI[extra] * index[t]
        out[s] = phi
    return out


def local_accuracy_error(phi: dict[int, np.ndarray], nu: np.ndarray) -> float:
    """max |sum_S phi_S - (nu(N) - nu(empty))| over explained points and times (efficiency)."""
    total = np.sum(np.stack(list(phi.values())), axis=0)
    return float(np.max(np.abs(total - (nu[-1] - nu[0]))))


def interaction_share(m: np.ndarray) -> np.ndarray:
    """Share of Moebius mass in orders >= 2 per explained point and time: what an additive explanation omits."""
    sizes = popcount(np.arange(m.shape[0]))
    absolute = np.abs(m[1:])
    total = np.sum(absolute, axis=0)
    higher = np.sum(absolute[sizes[1:] >= 2], axis=0)
    return np.divide(higher, total, out=np.zeros_like(total), where=total > 0)


def time_dependent_share(m: np.ndarray) -> float:
    """SurvFD split f_S(x_S, t) = g_S(x_S) + r_S(x_S, t) with g_S the time mean: share of the interaction
    (order >= 2) mass that is time-dependent, sum |r_S| / sum |f_S| over points and times. 0 when the
    interaction mass is round-off (below 1e-12 of all the mass), where the ratio would be noise."""
    sizes = popcount(np.arange(m.shape[0]))
    higher = m[sizes >= 2]
    total = float(np.sum(np.abs(higher)))
    if total <= 1e-12 * float(np.sum(np.abs(m[1:]))):
        return 0.0
    varying = float(np.sum(np.abs(higher - higher.mean(axis=-1, keepdims=True))))
    return varying / total


def mask_of(*features: int) -> int:
    return int(np.sum([1 << f for f in features]))


def n_terms(p: int, order: int) -> int:
    return int(np.sum([comb(p, j) for j in range(1, order + 1)]))
