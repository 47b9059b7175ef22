"""Protein backbone geometry shared by the structure papers: superposition, RMSD, TM-score, contacts, torsions.

Backbones are ``(L, 3, 3)`` arrays of N, CA, C in Angstrom, which are the first three slots of the ATLAS
source's atom14 layout (:mod:`repro.data.atlas.atom14`), so :func:`backbone_from_atom14` is a slice.
Everything here is numpy; papers that need gradients port the same formulas to torch and test them
against these functions.
"""

from __future__ import annotations

import numpy as np

from repro.data.atlas.atom14 import ATOM14

BACKBONE_ATOMS = ATOM14["GLY"][:3]  # ("N", "CA", "C"): atom14 slots 0, 1, 2
CA = BACKBONE_ATOMS.index("CA")


def backbone_from_atom14(xyz14: np.ndarray) -> np.ndarray:
    """``[..., L, 14, 3]`` atom14 coordinates -> ``[..., L, 3, 3]`` N/CA/C backbone."""
    return xyz14[..., : len(BACKBONE_ATOMS), :]


def kabsch(mobile: np.ndarray, target: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Rotation ``R`` and translation ``t`` minimising ``sum w |mobile @ R.T + t - target|^2`` (proper, det +1)."""
    mobile, target = np.asarray(mobile, np.float64), np.asarray(target, np.float64)
    w = np.ones(len(mobile)) if weights is None else np.asarray(weights, np.float64)
    w = w / w.sum()
    mu_m, mu_t = w @ mobile, w @ target
    h = ((mobile - mu_m) * w[:, None]).T @ (target - mu_t)
    u, _, vt = np.linalg.svd(h)
    d = np.sign(np.linalg.det(vt.T @ u.T)) or 1.0
    rotation = vt.T @ np.diag([1.0, 1.0, d]) @ u.T
    return rotation, mu_t - mu_m @ rotation.T


def superpose(mobile: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``mobile`` (N, 3) moved onto ``target`` by the optimal rigid motion."""
    rotation, translation = kabsch(mobile, target)
    return np.asarray(mobile, np.float64) @ rotation.T + translation


def rmsd(a: np.ndarray, b: np.ndarray, align: bool = True) -> float:
    """Root-mean-square deviation of two (N, 3) point sets, after optimal superposition when ``align``."""
    a = superpose(a, b) if align else np.asarray(a, np.float64)
    return float(np.sqrt(np.mean(np.sum((a - np.asarray(b, np.float64)) ** 2, axis=-1))))


def tm_d0(length: int) -> float:
    """TM-score distance scale d0(L) = 1.24 (L - 15)^(1/3) - 1.8 (Zhang & Skolnick 2004), at least 0.5 Å."""
    return max(0.5, 1.24 * np.cbrt(max(length, 19) - 15) - 1.8)


def tm_score(model: np.ndarray, native: np.ndarray, iterations: int = 20) -> float:
    """TM-score of C-alpha sets with known residue correspondence, normalised by the native's length.

    As the TM-score program: superpositions seeded on fragments of length L, L/2, ..., 4 are refined on
    the residues closer than d0 clipped to [4.5, 8] Å, and the best score over all of them is kept (TM-score
    is a maximum over superpositions). Checked against ``tmtools`` (TM-align) in the tests.
    """
    model, native = np.asarray(model, np.float64), np.asarray(native, np.float64)
    n = len(native)
    d0 = tm_d0(n)
    d_search = float(np.clip(d0, 4.5, 8.0))
    best = 0.0
    fragment = n
    while True:
        step = max(1, fragment // 2)
        for start in range(0, n - fragment + 1, step):
            subset = np.arange(start, start + fragment)
            for _ in range(iterations):
                rotation, translation = kabsch(model[subset], native[subset])
                moved = model @ rotation.T + translation
                d = np.linalg.norm(moved - native, axis=-1)
                best = max(best, float(np.sum(1.0 / (1.0 + (d / d0) ** 2)) / n))
                cut = d_search
                new = np.flatnonzero(d < cut)
                while len(new) < 3 and cut < 100:
                    cut += 0.5
                    new = np.flatnonzero(d < cut)
                if np.array_equal(new, subset):
                    break
                subset = new
        if fragment <= 4:
            break
        fragment = max(4, fragment // 2)
    return best


def distance_matrix(points: np.ndarray) -> np.ndarray:
    """Pairwise Euclidean distances of (N, 3) points."""
    points = np.asarray(points, np.float64)
    return np.linalg.norm(points[:, None, :] - points[None, :, :], axis=-1)


def contact_map(ca: np.ndarray, cutoff: float = 8.0, min_separation: int = 0) -> np.ndarray:
    """Boolean (L, L) map of C-alpha pairs closer than ``cutoff`` Å and at least ``min_separation`` apart in sequence."""
    d = distance_matrix(ca)
    i, j = np.indices(d.shape)
    return (d < cutoff) & (np.abs(i - j) >= min_separation)


def dihedral(p0: np.ndarray, p1: np.ndarray, p2: np.ndarray, p3: np.ndarray) -> np.ndarray:
    """Dihedral angles (radians, in (-pi, pi]) of point quadruples ``[..., 3]`` (IUPAC sign convention)."""
    b0, b1, b2 = p0 - p1, p2 - p1, p3 - p2
    b1n = b1 / np.linalg.norm(b1, axis=-1, keepdims=True)
    v = b0 - np.sum(b0 * b1n, axis=-1, keepdims=True) * b1n
    w = b2 - np.sum(b2 * b1n, axis=-1, keepdims=True) * b1n
    x = np.sum(v * w, axis=-1)
    y = np.sum(np.cross(b1n, v) * w, axis=-1)
    return np.arctan2(y, x)


def backbone_dihedrals(backbone: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(phi, psi)`` per residue in radians from an ``(L, 3, 3)`` N/CA/C backbone; NaN where undefined.

    phi_i = C_{i-1}-N_i-CA_i-C_i (NaN for the first residue); psi_i = N_i-CA_i-C_i-N_{i+1} (NaN for the last).
    """
    bb = np.asarray(backbone, np.float64)
    n, ca, c = bb[:, 0], bb[:, 1], bb[:, 2]
    phi = np.full(len(bb), np.nan)
    psi = np.full(len(bb), np.nan)
    phi[1:] = dihedral(c[:-1], n[1:], ca[1:], c[1:])
    psi[:-1] = dihedral(n[:-1], ca[:-1], c[:-1], n[1:])
    return phi, psi


# Engh & Huber ideal backbone geometry (Å, radians): bonds N-CA, CA-C, C-N and angles at CA, C, N.
BOND = {"N-CA": 1.458, "CA-C": 1.525, "C-N": 1.329}
ANGLE = {"N-CA-C": np.deg2rad(111.2), "CA-C-N": np.deg2rad(116.2), "C-N-CA": np.deg2rad(121.7)}


def place_atom(a: np.ndarray, b: np.ndarray, c: np.ndarray, bond: float, angle: float, torsion: float) -> np.ndarray:
    """Point d with |cd| = bond, angle bcd = angle and dihedral abcd = torsion (natural extension reference frame).
    Points may carry leading batch dimensions ``[..., 3]``; bond, angle and torsion broadcast against them."""
    bc = (c - b) / np.linalg.norm(c - b, axis=-1, keepdims=True)
    n = np.cross(b - a, bc)
    n = n / np.linalg.norm(n, axis=-1, keepdims=True)
    m = np.stack([bc, np.cross(n, bc), n], axis=-1)
    angle, torsion = np.asarray(angle, np.float64), np.asarray(torsion, np.float64)
    d2 = np.asarray(bond, np.float64)[..., None] * np.stack(
        np.broadcast_arrays(-np.cos(angle), np.sin(angle) * np.cos(torsion), np.sin(angle) * np.sin(torsion)), -1
    )
    return c + np.einsum("...ij,...j->...i", m, d2)


def build_backbone(phi: np.ndarray, psi: np.ndarray, omega: np.ndarray | float = np.pi) -> np.ndarray:
    """``(L, 3, 3)`` N/CA/C backbone with ideal bonds and angles and the given torsions (inverse of
    :func:`backbone_dihedrals`; ``phi[0]`` and ``psi[-1]`` are not used)."""
    phi, psi = np.asarray(phi, np.float64), np.asarray(psi, np.float64)
    omega = np.broadcast_to(np.asarray(omega, np.float64), phi.shape)
    n_res = len(phi)
    out = np.zeros((n_res, 3, 3))
    out[0, 0] = [0.0, 0.0, 0.0]
    out[0, 1] = [BOND["N-CA"], 0.0, 0.0]
    angle = ANGLE["N-CA-C"]
    out[0, 2] = out[0, 1] + BOND["CA-C"] * np.array([-np.cos(angle), np.sin(angle), 0.0])
    for i in range(1, n_res):
        out[i, 0] = place_atom(out[i - 1, 0], out[i - 1, 1], out[i - 1, 2], BOND["C-N"], ANGLE["CA-C-N"], psi[i - 1])
        out[i, 1] = place_atom(out[i - 1, 1], out[i - 1, 2], out[i, 0], BOND["N-CA"], ANGLE["C-N-CA"], omega[i - 1])
        out[i, 2] = place_atom(out[i - 1, 2], out[i, 0], out[i, 1], BOND["CA-C"], ANGLE["N-CA-C"], phi[i])
    return out.astype(np.float32)


def add_oxygens(backbone: np.ndarray) -> np.ndarray:
    """``(..., L, 4, 3)`` N/CA/C/O from ``(..., L, 3, 3)`` N/CA/C: each carbonyl O placed in the peptide plane
    (C=O 1.23 Å, CA-C-O 120.5°, N-CA-C-O = psi + 180°; the last residue, without a psi, takes psi = 0), for DSSP
    on backbone-only models; leading batch dimensions are kept."""
    bb = np.asarray(backbone, np.float64)
    n, ca, c = bb[..., 0, :], bb[..., 1, :], bb[..., 2, :]
    psi = np.zeros(bb.shape[:-2])
    psi[..., :-1] = dihedral(n[..., :-1, :], ca[..., :-1, :], c[..., :-1, :], n[..., 1:, :])
    o = place_atom(n, ca, c, 1.23, np.deg2rad(120.5), np.nan_to_num(psi) + np.pi)
    return np.concatenate([bb, o[..., None, :]], axis=-2).astype(np.float32)
