"""The 3-D transformer sees only atom types and distances: invariant to rotations, translations, padding."""

import numpy as np
import pytest
import torch

from repro.papers.nmrshift.model import ShiftTransformer


def _inputs():
    g = torch.Generator().manual_seed(0)
    atoms = torch.tensor([[6, 6, 8, 1, 1, 1, 1, 1, 1, 0, 0], [6, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0]])
    coords = torch.randn(2, 11, 3, generator=g) * 1.2
    return atoms, coords, torch.tensor([1, 2])


def _rotation(seed):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(3, 3)))
    return torch.as_tensor(q, dtype=torch.float32)


@pytest.mark.parametrize("solvent", ["none", "cls", "atom_pre", "atom_post", "scalar"])
def test_rigid_motion_invariance(solvent):
    torch.manual_seed(0)
    model = ShiftTransformer(width=16, layers=2, heads=2, kernels=8, solvent=solvent).eval()
    atoms, coords, solv = _inputs()
    moved = coords @ _rotation(1).T + torch.tensor([3.0, -1.0, 2.0])
    torch.testing.assert_close(model(atoms, coords, solv), model(atoms, moved, solv), atol=2e-5, rtol=0)


def test_padding_does_not_change_predictions():
    torch.manual_seed(0)
    model = ShiftTransformer(width=16, layers=2, heads=2, kernels=8).eval()
    atoms, coords, solv = _inputs()
    short = model(atoms[1:, :5], coords[1:, :5], solv[1:])
    long = model(atoms[1:], coords[1:], solv[1:])[:, :5]
    torch.testing.assert_close(short, long, atol=1e-5, rtol=0)


def test_solvent_mode_none_ignores_solvent_and_cls_uses_it():
    torch.manual_seed(0)
    atoms, coords, _ = _inputs()
    plain = ShiftTransformer(width=16, layers=1, heads=2, kernels=8, solvent="none").eval()
    torch.testing.assert_close(plain(atoms, coords, torch.tensor([1, 1])), plain(atoms, coords, torch.tensor([2, 3])))
    cls = ShiftTransformer(width=16, layers=1, heads=2, kernels=8, solvent="cls").eval()
    torch.nn.init.normal_(cls.solvent.weight)
    assert not torch.allclose(cls(atoms, coords, torch.tensor([1, 1])), cls(atoms, coords, torch.tensor([2, 3])))
