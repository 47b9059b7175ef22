"""Dependence-weighted sliced-Wasserstein hub coupling across views, with cycle auditing.

Each view's shared representation z_m (n, k) is compared with a hub: the dependence-weighted barycenter
h = sum_m w_m z_m, where w_m is view m's mean canonical correlation with the others (views that carry
more of the shared signal pull the hub harder). SW_2^2 over L random directions is computed by sorting
and matching in 1-D. Couplings between views go through the hub (view a -> hub ranks -> view b), so
they compose around any cycle; the audit measures how far direct pairwise sort-couplings are from
that and checks the hub couplings close every cycle exactly. Direct couplings are nearest-neighbour
maps (cosine) between views, which need not compose: their cycle error audits how consistent the
pairwise alignments are.
"""

from __future__ import annotations

import itertools

import numpy as np


def directions(rng: np.random.Generator, k: int, n_dirs: int) -> np.ndarray:
    theta = rng.normal(size=(n_dirs, k))
    return theta / np.linalg.norm(theta, axis=1, keepdims=True)


def sliced_w2(a: np.ndarray, b: np.ndarray, theta: np.ndarray) -> float:
    """SW_2^2 between equal-size samples a and b along the unit directions theta (sort and match)."""
    pa, pb = np.sort(a @ theta.T, axis=0), np.sort(b @ theta.T, axis=0)
    return float(np.mean((pa - pb) ** 2))


def dependence_weights(z: list[np.ndarray]) -> np.ndarray:
    """w_m proportional to view m's mean absolute per-component correlation with the other views."""
    dep = []
    for m, zm in enumerate(z):
        corr = [
            np.mean(np.abs([np.corrcoef(zm[:, j], zn[:, j])[0, 1] for j in range(zm.shape[1])]))
            for n, zn in enumerate(z)
            if n != m
        ]
        dep.append(np.mean(corr))
    dep = np.asarray(dep)
    return dep / np.sum(dep)


def hub(z: list[np.ndarray], weights: np.ndarray) -> np.ndarray:
    return np.sum([w * zm for w, zm in zip(weights, z)], axis=0)


def sort_coupling(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Permutation pi with a[i] matched to b[pi[i]] by rank on one projection (1-D optimal transport)."""
    pi = np.empty(a.size, dtype=int)
    pi[np.argsort(a, kind="stable")] = np.argsort(b, kind="stable")
    return pi


def nearest(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Index of each row of a's cosine nearest neighbour among the rows of b."""
    an = a / np.linalg.norm(a, axis=1, keepdims=True)
    bn = b / np.linalg.norm(b, axis=1, keepdims=True)
    return np.argmax(an @ bn.T, axis=1)


def cycle_audit(z: list[np.ndarray], h: np.ndarray, theta: np.ndarray) -> dict:
    """Share of points whose coupling around a 3-cycle does not return home: direct vs through the hub."""
    direct, through_hub = [], []
    proj = [zm @ theta for zm in z]
    ph = h @ theta
    to_hub = [sort_coupling(p, ph) for p in proj]
    from_hub = [np.argsort(t) for t in to_hub]
    for a, b, c in itertools.permutations(range(len(z)), 3):
        ab, bc, ca = (nearest(z[i], z[j]) for i, j in ((a, b), (b, c), (c, a)))
        direct.append(np.mean(ca[bc[ab]] != np.arange(ab.size)))
        hab, hbc, hca = (from_hub[j][to_hub[i]] for i, j in ((a, b), (b, c), (c, a)))
        through_hub.append(np.mean(hca[hbc[hab]] != np.arange(ab.size)))
    return {"direct_cycle_error": float(np.mean(direct)), "hub_cycle_error": float(np.max(through_hub))}
