"""Field metrics against direct formulas and scikit-learn's confusion matrix."""

import numpy as np
import pytest
from sklearn.metrics import confusion_matrix

from repro.metrics.fields import contingency, csi_m, max_pool, relative_l2, scores, skill_by_lead, vrmse


def test_relative_l2_is_the_per_sample_norm_ratio():
    rng = np.random.default_rng(0)
    true, pred = rng.normal(size=(3, 4, 5)), rng.normal(size=(3, 4, 5))
    expected = [np.sqrt(np.sum((pred[i] - true[i]) ** 2) / np.sum(true[i] ** 2)) for i in range(3)]
    np.testing.assert_allclose(relative_l2(pred, true), expected)


def test_vrmse_is_rmse_over_the_standard_deviation_of_the_truth():
    rng = np.random.default_rng(1)
    true, pred = rng.normal(2.0, 3.0, size=(2, 3, 8, 8)), rng.normal(size=(2, 3, 8, 8))
    got = vrmse(pred, true)
    for i in range(2):
        for c in range(3):
            rmse = np.sqrt(np.mean((pred[i, c] - true[i, c]) ** 2))
            assert got[i, c] == pytest.approx(rmse / np.std(true[i, c]), rel=1e-6)
    assert vrmse(true, true).max() == 0.0


def test_contingency_counts_equal_scikit_learn_confusion_matrix():
    rng = np.random.default_rng(2)
    obs, pred = rng.uniform(0, 255, size=(4, 16, 16)), rng.uniform(0, 255, size=(4, 16, 16))
    for pool in (1, 4):
        c = contingency(pred, obs, 100.0, pool)
        p, o = max_pool(pred, pool) >= 100.0, max_pool(obs, pool) >= 100.0
        tn, fp, fn, tp = confusion_matrix(o.ravel(), p.ravel(), labels=[False, True]).ravel()
        assert (c["hits"], c["misses"], c["false_alarms"], c["correct_negatives"]) == (tp, fn, fp, tn)


def test_max_pool_takes_window_maxima():
    x = np.arange(16.0).reshape(1, 4, 4)
    np.testing.assert_array_equal(max_pool(x, 2), [[[5.0, 7.0], [13.0, 15.0]]])


def test_scores_follow_their_formulas_and_hss_agrees_with_the_kappa_form():
    c = {"hits": 30.0, "misses": 10.0, "false_alarms": 20.0, "correct_negatives": 140.0}
    s = scores(c)
    assert s["csi"] == pytest.approx(30 / 60) and s["pod"] == pytest.approx(30 / 40) and s["far"] == pytest.approx(0.4)
    n = 200.0
    expected_correct = ((30 + 10) * (30 + 20) + (20 + 140) * (10 + 140)) / n
    kappa = (30 + 140 - expected_correct) / (n - expected_correct)
    assert s["hss"] == pytest.approx(kappa)
    assert np.isnan(scores({"hits": 0.0, "misses": 0.0, "false_alarms": 0.0, "correct_negatives": 5.0})["csi"])


def test_skill_by_lead_and_csi_m_average_over_leads_then_thresholds():
    rng = np.random.default_rng(3)
    obs = rng.uniform(0, 255, size=(5, 3, 8, 8))
    skill = skill_by_lead(obs, obs, [50.0, 150.0], [1, 4])
    assert csi_m(skill) == 1.0 and csi_m(skill, 4) == 1.0
    noisy = skill_by_lead(obs + rng.normal(0, 60, obs.shape), obs, [50.0, 150.0], [1])
    per_thr = [np.mean(noisy["pool1"][t]["csi"]) for t in ("50", "150")]
    assert csi_m(noisy) == pytest.approx(np.mean(per_thr)) and csi_m(noisy) < 1.0
