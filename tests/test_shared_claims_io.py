"""Claims verdicts, atomic writes and shared metrics against independent computations."""

import json
import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import r2_score

from repro.metrics import regression as metrics
from repro.reporting.claims import (
    Claim,
    ClaimSpec,
    Interval,
    Test,
    bootstrap_interval,
    evaluate_claims,
    seed_interval,
    write_claims,
)
from repro.workflow.io import InputError, atomic_path, read_json, write_json


@pytest.mark.parametrize(
    "test,ours,expected",
    [
        (Test("<", 1.0), 0.5, True),
        (Test("<", 1.0), 1.0, False),
        (Test(">=", 0.8), 0.8, True),
        (Test("within", 10.0, rel_tol=0.1), 10.9, True),
        (Test("within", 10.0, rel_tol=0.1), 11.1, False),
        (Test("within", 0.0, abs_tol=0.5), -0.4, True),
        (Test("between", low=1.0, high=2.0), 2.5, False),
        (Test("<", 1.0), float("nan"), False),
        (Test(">", -1.0), None, False),
    ],
)
def test_verdict_follows_test(test, ours, expected):
    assert test.passes(ours) is expected


def test_claims_file_has_computed_verdicts(tmp_path):
    path = tmp_path / "claims.json"
    write_claims(
        path,
        "demo",
        [
            Claim("a", "x below 1", "smoke", 0.3, Test("<", 1.0), kind="paper"),
            Claim("b", "x above 1", "full", 0.3, Test(">", 1.0), kind="check"),
        ],
    )
    doc = json.loads(path.read_text())
    assert [c["verdict"] for c in doc["claims"]] == ["pass", "fails"]
    assert doc["claims"][0]["test_text"] == "ours < 1"
    assert [c["kind"] for c in doc["claims"]] == ["paper", "check"]


def test_duplicate_claim_ids_rejected(tmp_path):
    with pytest.raises(ValueError, match="duplicate"):
        write_claims(tmp_path / "c.json", "demo", [Claim("a", "s", "smoke", 1, Test("<", 2), kind="check")] * 2)


def test_atomic_path_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.json"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_atomic_path_replaces_directory(tmp_path):
    target = tmp_path / "store.zarr"
    target.mkdir()
    (target / "old").write_text("old")
    with atomic_path(target) as tmp:
        tmp.mkdir()
        (tmp / "new").write_text("new")
    assert sorted(p.name for p in target.iterdir()) == ["new"]
    assert [p.name for p in tmp_path.iterdir()] == ["store.zarr"]


def test_read_json_names_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="bad.json"):
        read_json(bad)
    write_json(tmp_path / "ok.json", {"x": np.float32(1.5), "a": np.arange(2)})
    assert read_json(tmp_path / "ok.json") == {"x": 1.5, "a": [0, 1]}


def test_metrics_against_independent_formulas():
    rng = np.random.default_rng(0)
    true, pred = rng.normal(size=200), rng.normal(size=200)
    assert metrics.rmse(pred, true) == pytest.approx(math.sqrt(sum((p - t) ** 2 for p, t in zip(pred, true)) / 200))
    assert metrics.mae(pred, true) == pytest.approx(np.abs(pred - true).mean())
    assert metrics.nse(pred, true) == pytest.approx(r2_score(true, pred))
    assert metrics.spearman(pred, true) == pytest.approx(stats.spearmanr(pred, true)[0])
    assert metrics.rmse(np.array([1.0, np.nan]), np.array([2.0, 5.0])) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "test,ours,interval,expected",
    [
        (Test(">", 0.0), 0.5, Interval(0.1, 0.9, "t", 3), True),
        (Test(">", 0.0), 0.5, Interval(-0.1, 0.9, "t", 3), False),
        (Test("<", 1.0), 0.5, Interval(0.2, 1.2, "t", 3), False),
        (Test("between", low=0.0, high=1.0), 0.5, Interval(0.2, 0.8, "t", 3), True),
        (Test(">", 0.0), 0.5, Interval(float("nan"), 0.9, "t", 3), False),
    ],
)
def test_interval_must_clear_the_threshold(test, ours, interval, expected):
    assert test.passes(ours, interval) is expected


def test_between_rejects_low_above_high():
    with pytest.raises(ValueError, match="low <= high"):
        Test("between", low=2.0, high=1.0)


def test_serialised_test_keeps_zero_fields(tmp_path):
    path = tmp_path / "claims.json"
    write_claims(path, "demo", [Claim("a", "s", "smoke", 0.0, Test("<=", 0.0), kind="check")])
    assert json.loads(path.read_text())["claims"][0]["test"] == {
        "op": "<=",
        "value": 0.0,
        "abs_tol": 0.0,
        "rel_tol": 0.0,
    }


def test_missing_or_nan_input_is_written_as_null_and_fails(tmp_path):
    specs = [
        ClaimSpec("gone", "paper", "s", Test(">", 0.0), lambda m: m["absent"]),
        ClaimSpec("nan", "paper", "s", Test(">", 0.0), lambda m: np.min([1.0, float("nan")])),
    ]
    claims = evaluate_claims(specs, {}, "smoke")
    write_claims(tmp_path / "c.json", "demo", claims)
    doc = json.loads((tmp_path / "c.json").read_text())["claims"]
    assert [c["id"] for c in doc] == ["gone", "nan"]
    assert all(c["ours"] is None and c["verdict"] == "fails" for c in doc)
    assert "absent" in doc[0]["details"]["error"]


def test_seed_interval_is_the_student_t_interval():
    x = np.array([1.0, 1.4, 0.9, 1.2])
    m = seed_interval(x)
    low, high = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    assert m.value == pytest.approx(x.mean()) and m.interval.low == pytest.approx(low)
    assert m.interval.high == pytest.approx(high) and m.interval.n == 4
    assert math.isnan(seed_interval([1.0, float("nan")]).interval.low)


def test_bootstrap_interval_covers_the_mean_difference():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 1.0, 200), rng.normal(0.0, 1.0, 200)
    m = bootstrap_interval([a, b], lambda x, y: np.mean(x) - np.mean(y), n_resamples=500)
    assert m.interval.low < a.mean() - b.mean() < m.interval.high and m.interval.low > 0.5
