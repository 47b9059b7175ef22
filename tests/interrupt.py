"""Interrupt a training run inside ``repro.learning.training.train`` at a chosen epoch, for the resume tests.

Every paper's resume test trains once uninterrupted, once with an exception raised at the start of an
epoch (after a checkpoint was written), then reruns, and compares the outputs bit for bit.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np

import repro.learning.training


class Interrupted(RuntimeError):
    """Raised in place of a kill."""


@contextlib.contextmanager
def interrupted_at(monkeypatch, epoch: int):
    """Raise :class:`Interrupted` when ``train`` starts epoch ``epoch`` (it must be called with ``seed=``)."""
    original = repro.learning.training.seed_epoch
    hits = []

    def seed_epoch(seed: int, e: int) -> None:
        if e == epoch:
            hits.append(e)
            raise Interrupted(f"interrupted at epoch {e}")
        original(seed, e)

    with monkeypatch.context() as m:
        m.setattr(repro.learning.training, "seed_epoch", seed_epoch)
        yield hits


def same_arrays(a: str | Path, b: str | Path, skip: tuple[str, ...] = ("train_seconds",)) -> None:
    """Two .npz files hold the same arrays exactly (timings left out)."""
    with np.load(a) as x, np.load(b) as y:
        assert sorted(x.files) == sorted(y.files)
        for key in x.files:
            if key not in skip:
                np.testing.assert_array_equal(x[key], y[key], err_msg=key)
