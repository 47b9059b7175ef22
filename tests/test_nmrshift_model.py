"""The 3-D transformer sees only atom types and distances: invariant to rotations, translations, padding; the
environment MLP's precomputed features do not depend on padding either, to the bit."""

import numpy as np
import pandas as pd
import pytest
import torch

from repro.papers.nmrshift.model import EnvironmentMLP, ShiftTransformer, gaussian_environment
from repro.papers.nmrshift.records import RecordSet


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


def test_precomputed_features_equal_those_of_the_fully_padded_records():
    """attach_features trims each chunk to its longest molecule (here at most 12 atoms, and 40: either side of the 25 where
    cdist's default would change method); the features equal those computed at the full padded width, bit for bit."""
    rng = np.random.default_rng(0)
    sizes = np.r_[rng.integers(5, 13, 64), rng.integers(5, 41, 9), 40]
    atoms = np.zeros((len(sizes), 70), np.int64)
    coords = np.zeros((len(sizes), 70, 3), np.float32)
    for i, n in enumerate(sizes):
        atoms[i, :n] = rng.choice([1, 6, 7, 8], n)
        coords[i, :n] = rng.normal(scale=2.0, size=(n, 3))
    empty = np.zeros(atoms.shape)
    frame = pd.DataFrame(index=range(len(sizes)))
    records = RecordSet(frame, atoms, coords, empty > 0, empty, empty, np.zeros(len(sizes)), np.zeros(len(sizes)))
    model = EnvironmentMLP(kernels=8)
    full = np.concatenate(
        [
            gaussian_environment(torch.as_tensor(atoms[i : i + 64]), torch.as_tensor(coords[i : i + 64]), 8)
            for i in (0, 64)
        ]
    )
    records.attach_features(model)
    assert np.array_equal(records.features, full)
