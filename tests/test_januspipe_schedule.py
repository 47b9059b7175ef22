"""JanusPipe's schedule simulator and WaveK split against closed forms and brute force."""

import itertools

import numpy as np
import pytest

from repro.papers.januspipe.evaluate import closed_form_check
from repro.papers.januspipe.schedule import (
    closed_form_bubble,
    placement,
    simulate,
    stage_costs,
    uniform_split,
    wavek_split,
)


@pytest.mark.parametrize(("stages", "micro"), [(2, 3), (3, 5), (4, 8), (5, 5)])
@pytest.mark.parametrize("policy", ["gpipe", "1f1b"])
def test_uniform_two_phase_bubble_is_the_closed_form(stages, micro, policy):
    result = simulate(np.ones((stages, 2)), placement("linear", stages), micro, policy, two_phase=True)
    assert result.bubble == pytest.approx(closed_form_bubble(stages, micro), abs=1e-12)
    assert result.makespan == pytest.approx(2 * (micro + stages - 1))


def test_1f1b_holds_d_minus_rank_micro_batches_and_gpipe_holds_all():
    one = simulate(np.ones((4, 2)), placement("linear", 4), 8, "1f1b", memory=np.ones(4), two_phase=True)
    gpipe = simulate(np.ones((4, 2)), placement("linear", 4), 8, "gpipe", memory=np.ones(4), two_phase=True)
    np.testing.assert_array_equal(one.peak_memory, [4, 3, 2, 1])
    np.testing.assert_array_equal(gpipe.peak_memory, [8, 8, 8, 8])


def test_four_phase_schedule_respects_dependencies_and_devices():
    costs = np.random.default_rng(0).uniform(0.5, 2.0, (6, 4))
    devices = placement("folded", 3)
    r = simulate(costs, devices, 5, "wave", wave=2)
    index = {t: i for i, t in enumerate(r.tasks)}
    for i, (m, p, s) in enumerate(r.tasks):
        assert r.device[i] == devices[s]
        if p == "B1" and s == 5:
            assert r.start[i] >= r.end[index[(m, "F", 5)]] - 1e-12
        if p == "B2a" and s == 0:
            assert r.start[i] >= r.end[index[(m, "B1", 0)]] - 1e-12
    for d in range(3):  # a device runs one task at a time
        mine = np.flatnonzero(r.device == d)
        order = mine[np.argsort(r.start[mine])]
        assert np.all(r.start[order[1:]] >= r.end[order[:-1]] - 1e-12)
    assert r.makespan >= np.bincount(r.device, weights=r.end - r.start).max() - 1e-12


def test_wavek_split_minimises_the_busiest_device_by_brute_force():
    unit = np.random.default_rng(1).uniform(0.1, 3.0, (7, 4))
    split = wavek_split(unit, 2, "folded")
    devices = placement("folded", 2)

    def load(sp):
        return np.bincount(devices, weights=stage_costs(unit, sp).sum(axis=1)).max()

    best = min(load(np.diff((0, *c, 7)).tolist()) for c in itertools.combinations(range(1, 7), 3))
    assert load(split) == pytest.approx(best)
    assert sum(split) == 7 and uniform_split(7, 4) == [2, 2, 2, 1]


def test_closed_form_check_reports_zero_error():
    assert closed_form_check([[2, 4], [4, 8]]) <= 1e-12
