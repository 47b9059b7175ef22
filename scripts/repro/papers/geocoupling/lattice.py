"""2-D HP lattice proteins solved exactly: every self-avoiding walk, every sequence's ground states.

A conformation of N residues is stored as its N - 2 relative turns (0 = left, 1 = straight, 2 = right)
after a first step along +x, which removes the four rotations; the mirror image swaps left and right, so
the symmetry-reduced set keeps the walks whose first non-straight turn is a left turn (plus the straight
rod). A sequence of N residues is an integer whose bit i is 1 when residue i is hydrophobic (H).
E(seq, conf) = -(number of H-H lattice contacts between residues that are not chain neighbours).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LEFT, STRAIGHT, RIGHT = 0, 1, 2
STEPS = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]])  # direction d: +x, +y, -x, -y (left turn = d + 1)
TURN_DELTA = np.array([1, 0, -1])


def coordinates(turns: np.ndarray) -> np.ndarray:
    """(..., N - 2) turns -> (..., N, 2) integer lattice coordinates, first residue at the origin."""
    turns = np.asarray(turns, dtype=np.int64)
    direction = np.cumsum(TURN_DELTA[turns], axis=-1) % 4
    direction = np.concatenate([np.zeros((*turns.shape[:-1], 1), dtype=np.int64), direction], axis=-1)
    steps = STEPS[direction]
    origin = np.zeros((*turns.shape[:-1], 1, 2), dtype=np.int64)
    return np.concatenate([origin, np.cumsum(steps, axis=-2)], axis=-2)


def self_avoiding_turns(n: int) -> np.ndarray:
    """All turn strings (W, n - 2) whose walk never revisits a site (first step fixed: W = c_{n-1} / 4)."""
    if n < 3:
        raise ValueError(f"need at least 3 residues, got {n}")
    turns = np.zeros((1, 0), dtype=np.int8)
    coords = np.array([[[0, 0], [1, 0]]])
    direction = np.zeros(1, dtype=np.int64)
    for _ in range(n - 2):
        new_dir = (direction[:, None] + TURN_DELTA[None, :]) % 4  # (W, 3)
        new_pos = coords[:, -1:, :] + STEPS[new_dir]  # (W, 3, 2)
        clash = (new_pos[:, :, None, :] == coords[:, None, :, :]).all(-1).any(-1)  # (W, 3)
        walk, turn = np.nonzero(~clash)
        turns = np.concatenate([turns[walk], turn[:, None].astype(np.int8)], axis=1)
        coords = np.concatenate([coords[walk], new_pos[walk, turn][:, None, :]], axis=1)
        direction = new_dir[walk, turn]
    return turns


def canonical(turns: np.ndarray) -> np.ndarray:
    """Mirror every turn string whose first non-straight turn is a right turn (left <-> right)."""
    turns = np.asarray(turns)
    bent = turns != STRAIGHT
    first = np.where(bent.any(-1), bent.argmax(-1), 0)
    flip = np.take_along_axis(turns, first[..., None], -1)[..., 0] == RIGHT
    mirrored = np.where(turns == STRAIGHT, STRAIGHT, 2 - turns)
    return np.where(flip[..., None], mirrored, turns)


def turn_code(turns: np.ndarray) -> np.ndarray:
    """Base-3 integer of each turn string (first turn most significant)."""
    turns = np.asarray(turns, dtype=np.int64)
    return turns @ (3 ** np.arange(turns.shape[-1] - 1, -1, -1))


def contact_pairs(n: int) -> np.ndarray:
    """(P, 2) residue pairs that can touch on the square lattice (|i - j| odd and >= 3)."""
    i, j = np.triu_indices(n, k=3)
    keep = (j - i) % 2 == 1
    return np.stack([i[keep], j[keep]], axis=1)


def sequence_bits(n: int, sequences: np.ndarray | None = None) -> np.ndarray:
    """(S, n) 0/1 hydrophobic indicators of sequence integers (all 2^n when ``sequences`` is None)."""
    seqs = np.arange(2**n) if sequences is None else np.asarray(sequences, dtype=np.int64)
    return ((seqs[:, None] >> np.arange(n)[None, :]) & 1).astype(np.int8)


def sequence_int(bits: np.ndarray) -> np.ndarray:
    """Inverse of :func:`sequence_bits`."""
    bits = np.asarray(bits, dtype=np.int64)
    return bits @ (1 << np.arange(bits.shape[-1]))


@dataclass
class Lattice:
    """The exact solution for chains of ``n`` residues."""

    n: int
    walks: int  # c_{n-1}: all self-avoiding walks of n - 1 steps
    turns: np.ndarray  # (C, n - 2) symmetry-reduced conformations
    energy: np.ndarray  # (2^n, C) int8
    e_min: np.ndarray  # (2^n,)
    degeneracy: np.ndarray  # (2^n,) number of symmetry-reduced ground states
    index_of_code: np.ndarray  # (3^(n-2),) conformation index of a canonical turn code, -1 if not a SAW

    def conformation_index(self, turns: np.ndarray) -> np.ndarray:
        """Index of each (possibly mirrored) turn string among :attr:`turns`; -1 when the walk clashes."""
        return self.index_of_code[turn_code(canonical(turns))]


def contacts(turns: np.ndarray, n: int) -> np.ndarray:
    """(C, P) 0/1: does pair p of :func:`contact_pairs` touch in conformation c."""
    xy = coordinates(turns)
    pairs = contact_pairs(n)
    gap = np.abs(xy[:, pairs[:, 0]] - xy[:, pairs[:, 1]]).sum(-1)
    return (gap == 1).astype(np.float32)


def solve(n: int) -> Lattice:
    """Enumerate the symmetry-reduced walks and every sequence's energies, minima and degeneracies."""
    every = self_avoiding_turns(n)
    walks = 4 * len(every)
    turns = every[(canonical(every) == every).all(-1)]
    hh = sequence_bits(n).astype(np.float32)
    pairs = contact_pairs(n)
    both = hh[:, pairs[:, 0]] * hh[:, pairs[:, 1]]  # (S, P)
    energy = -(both @ contacts(turns, n).T)
    energy = np.rint(energy).astype(np.int8)
    e_min = energy.min(axis=1)
    degeneracy = (energy == e_min[:, None]).sum(axis=1)
    index_of_code = np.full(3 ** (n - 2), -1, dtype=np.int64)
    index_of_code[turn_code(turns)] = np.arange(len(turns))
    return Lattice(n, walks, turns, energy, e_min, degeneracy, index_of_code)


def brute_force_energy(sequence: int, turns: np.ndarray) -> int | None:
    """E of one (sequence, turn string) by walking the chain site by site; None if the walk clashes.

    Written independently of :func:`solve` (a dictionary of occupied sites) so tests can check it.
    """
    n = len(turns) + 2
    x, y, d = 1, 0, 0
    sites = {(0, 0): 0, (1, 0): 1}
    for k, t in enumerate(turns):
        d = (d + (1 if t == LEFT else -1 if t == RIGHT else 0)) % 4
        dx, dy = ((1, 0), (0, 1), (-1, 0), (0, -1))[d]
        x, y = x + dx, y + dy
        if (x, y) in sites:
            return None
        sites[(x, y)] = k + 2
    hydrophobic = [(sequence >> i) & 1 for i in range(n)]
    count = 0
    for (sx, sy), i in sites.items():
        for nx, ny in ((sx + 1, sy), (sx, sy + 1)):
            j = sites.get((nx, ny))
            if j is not None and abs(i - j) > 1 and hydrophobic[i] and hydrophobic[j]:
                count += 1
    return -count
