"""Projection energy and the subspaces LoDA and the null-space baseline fix as LoRA down-projections.

All of it works on second moments S = E[x x^T] of a layer's inputs (float64): the energy a unit direction u
carries for a task is u^T S u (the first-order loss decrease an up-projection can reach along u, Theorem 3.1 of
the paper), so a basis's capacity for a task is tr(U^T S U).
"""

from __future__ import annotations

import functools
import hashlib
from collections import OrderedDict

import torch

_CACHE: OrderedDict = OrderedDict()
CACHE_SIZE = 256


def _digest(t: torch.Tensor) -> str:
    return hashlib.blake2b(t.detach().contiguous().numpy().tobytes(), digest_size=16).hexdigest()


def memoised(fn):
    """Reuse a basis computed from the very same moments: the first layer sees raw pixels, whose moments are the
    same for every method of a seed, and its eigendecompositions (d x d, d the pixel count) dominate the cost.
    Keyed by the bytes of the tensors and the other arguments, so a hit returns what the call would compute."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        parts = (*args, *sorted(kwargs.items()))
        key = (fn.__name__, *(_digest(a) if isinstance(a, torch.Tensor) else a for a in parts))
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key].clone()
        out = fn(*args, **kwargs)
        _CACHE[key] = out.clone()
        if len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
        return out

    return wrapper


def second_moment(x: torch.Tensor) -> torch.Tensor:
    """E[x x^T] of the rows of ``x`` in float64."""
    x = x.double()
    return x.T @ x / max(x.shape[0], 1)


def ridge(s: torch.Tensor, eps: float) -> torch.Tensor:
    """``s`` + eps * (mean eigenvalue) * I: a singular old-task moment (early tasks) stays invertible."""
    d = s.shape[0]
    scale = float(torch.trace(s)) / d if float(torch.trace(s)) > 0 else 1.0
    return s + eps * scale * torch.eye(d, dtype=s.dtype)


def top_eigenvectors(s: torch.Tensor, r: int) -> torch.Tensor:
    """Orthonormal (d, r) basis of the r leading eigenvectors of a symmetric matrix."""
    _, vecs = torch.linalg.eigh(s)
    return vecs[:, -r:].flip(1)


@memoised
def general_basis(s_old: torch.Tensor, s_new: torch.Tensor, r: int) -> torch.Tensor:
    """U_G: the r directions of largest old + new energy, argmax tr(U^T (S_old + S_new) U) over orthonormal U."""
    return top_eigenvectors(s_old + s_new, r)


@memoised
def isolated_basis(s_old: torch.Tensor, s_new: torch.Tensor, r: int, eps: float) -> torch.Tensor:
    """U_I: maximiser of tr(U^T S_new U) / tr(U^T S_old U) (generalised Rayleigh quotient), unit-norm columns.

    Cholesky S_old + eps I = L L^T; the leading eigenvectors v of L^-1 S_new L^-T map back as u = L^-T v.
    """
    chol = torch.linalg.cholesky(ridge(s_old, eps))
    inner = torch.linalg.solve_triangular(chol, s_new, upper=False)
    inner = torch.linalg.solve_triangular(chol, inner.T, upper=False).T
    v = top_eigenvectors(0.5 * (inner + inner.T), r)
    u = torch.linalg.solve_triangular(chol.T, v, upper=True)
    return u / u.norm(dim=0, keepdim=True)


@memoised
def null_space_basis(s_old: torch.Tensor, s_new: torch.Tensor, r: int, threshold: float) -> torch.Tensor:
    """InfLoRA-style bases: the leading new-task directions inside the null space of the old tasks' inputs.

    The old-task input space is spanned by the fewest leading eigenvectors of S_old holding ``threshold`` of its
    energy; the new-task moment projected onto its orthogonal complement gives the r bases.
    """
    vals, vecs = torch.linalg.eigh(s_old)
    vals, vecs = vals.flip(0), vecs.flip(1)
    total = float(vals.clamp_min(0).sum())
    if total > 0:
        k = int(
            torch.searchsorted(torch.cumsum(vals.clamp_min(0), 0) / total, torch.tensor(threshold, dtype=vals.dtype))
        )
        k = min(k + 1, s_old.shape[0] - r)
    else:
        k = 0
    old = vecs[:, :k]
    proj = torch.eye(s_old.shape[0], dtype=s_old.dtype) - old @ old.T
    return top_eigenvectors(proj @ s_new @ proj, r)


def energy(u: torch.Tensor, s: torch.Tensor) -> float:
    """tr(U^T S U): the task's energy captured by the columns of U."""
    return float(torch.trace(u.T @ s @ u))


def recalibration_system(
    b_general: torch.Tensor, a_general: torch.Tensor, s_old: torch.Tensor, s_new: torch.Tensor, weight: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Normal equations M lambda = b of the closed-form recalibration of the general branch (reconstructed).

    The merged general update B_G diag(lambda) A_G should stay close, at feature level, to each task's own
    optimum inside the general subspace: lambda = 0 for the old tasks (the merged backbone fits them) and
    lambda = 1 for the new task (the trained branch). With z = A_G x the weighted least-squares objective
    (1 - w) E_old||B_G diag(lambda) z||^2 + w E_new||B_G diag(lambda - 1) z||^2 needs only stored moments:
    M_t = (B_G^T B_G) o (A_G S_t A_G^T), M = (1 - w) M_old + w M_new, b = w M_new 1.
    """
    gram = b_general.double().T @ b_general.double()
    a = a_general.double()
    m_old = gram * (a @ s_old @ a.T)
    m_new = gram * (a @ s_new @ a.T)
    m = (1.0 - weight) * m_old + weight * m_new
    return m, weight * m_new.sum(1)


def recalibrate(m: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """lambda solving M lambda = b (least squares, so a rank-deficient M from an unused direction is fine)."""
    return torch.linalg.lstsq(m, b.unsqueeze(1), driver="gelsd").solution.squeeze(1)
