"""The four-phase stage decomposition equals monolithic autograd; the MLIP is conservative; EMT labels."""

import numpy as np
import pytest
import torch

from repro.papers.januspipe import data as data_stage
from repro.papers.januspipe import dataset
from repro.papers.januspipe.costs import measure
from repro.papers.januspipe.model import MLIP, decomposed, monolithic, transfer

SETTINGS = {"seed": 0, "kinds": ["Cu", "Ni", "Al", "CuNi"], "per_kind": 1, "strain": 0.03, "rattle": 0.1}
WEIGHTS = {"energy": 1.0, "forces": 10.0}


@pytest.fixture(scope="module")
def batch():
    rng = np.random.default_rng(0)
    records = [data_stage.configuration(rng, kind, SETTINGS) for kind in SETTINGS["kinds"]]
    arrays = {
        "positions": np.stack([a.positions for a, _, _ in records]),
        "cells": np.stack([np.asarray(a.cell) for a, _, _ in records]),
        "numbers": np.stack([a.numbers for a, _, _ in records]),
        "energy": np.array([e for _, e, _ in records]),
        "forces": np.stack([f for _, _, f in records]),
    }
    return dataset.batch(arrays, np.arange(len(records)))


@pytest.mark.parametrize("split", [[13], [1] * 13, [3, 4, 2, 4], [1, 5, 7]])
def test_stage_decomposition_equals_monolithic_autograd(batch, split):
    torch.manual_seed(0)
    reference = MLIP(6, 3.2, 16, 12, [13])
    model = transfer(reference, MLIP(6, 3.2, 16, 12, split))
    loss, energy, forces = monolithic(reference, batch, WEIGHTS)
    loss.backward()
    expected = [p.grad for p in reference.parameters()]
    e2, f2, grads = decomposed(model, batch, WEIGHTS)
    torch.testing.assert_close(e2, energy.detach(), rtol=1e-10, atol=0)
    torch.testing.assert_close(f2, forces.detach(), rtol=1e-10, atol=1e-14)
    for a, b in zip([g for stage in grads for g in stage], expected, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-14)


def test_forces_are_minus_the_energy_gradient_by_finite_differences(batch):
    torch.manual_seed(1)
    model = MLIP(6, 3.2, 16, 4, [5])
    _, _, forces = monolithic(model, batch, WEIGHTS)
    eps, (b, i, k) = 1e-5, (2, 7, 1)
    shifted = []
    for sign in (1, -1):
        pos = batch.positions.clone()
        pos[b, i, k] += sign * eps
        shifted.append(model.energy(batch, pos)[b].item())
    assert -(shifted[0] - shifted[1]) / (2 * eps) == pytest.approx(forces[b, i, k].item(), rel=1e-6, abs=1e-9)


def test_emt_labels_are_conservative_and_translation_invariant():
    atoms, energy, forces = data_stage.configuration(np.random.default_rng(3), "Cu", SETTINGS)
    np.testing.assert_allclose(forces.sum(axis=0), 0.0, atol=1e-10)
    moved = atoms.copy()
    moved.calc = type(atoms.calc)()
    moved.positions += 0.37
    assert moved.get_potential_energy() == pytest.approx(energy, abs=1e-9)


def test_measured_costs_cover_every_stage_and_phase(batch):
    model = MLIP(6, 3.2, 16, 4, [1, 2, 2])
    seconds, saved = measure(model, [batch] * 3, WEIGHTS, warmup=1)
    assert seconds.shape == (3, 4) and np.all(seconds > 0)
    assert np.all(saved > 0)


def test_cutoff_beyond_half_the_cell_is_refused():
    cells = np.stack([np.eye(3) * 6.0])
    with pytest.raises(ValueError, match="half the smallest cell width"):
        dataset.check_cutoff("configs.npz", cells, 3.2)
