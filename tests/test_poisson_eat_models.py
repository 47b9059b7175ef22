"""Poisson-eat data, POGLM and P-VAE pieces, claims and bad input."""

import json
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from scipy import stats

from repro.papers.poisson_eat import data, evaluate, glm_baseline, poglm, spikes, train, vae
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    out = tmp_path_factory.mktemp("pe")
    settings = {
        "data_seed": 0,
        "vae": {"n_test": 360},
        "poglm": {"n_observed": 5, "n_hidden": 2, "n_bins": 600, "decay": 3.0, "kernel_length": 8, "max_rate": 3.0},
    }
    paths = SimpleNamespace(
        digits=str(out / "digits.npz"), spikes=str(out / "spikes.npz"), manifest=str(out / "manifest.json")
    )
    data.main(SimpleNamespace(params=SimpleNamespace(settings=settings), output=paths))
    return paths


def test_history_matches_explicit_loop_and_torch_filter():
    rng = np.random.default_rng(0)
    x = rng.poisson(0.5, size=(50, 4)).astype(float)
    kernel = spikes.coupling_kernel(2.0, 6)
    loop = np.zeros_like(x)
    for t in range(50):
        for s in range(1, 7):
            if t - s >= 0:
                loop[t] += kernel[s - 1] * x[t - s]
    np.testing.assert_allclose(spikes.history(x, kernel), loop, atol=1e-12)
    got = poglm.causal_filter(torch.tensor(x), torch.tensor(kernel)).numpy()
    np.testing.assert_allclose(got, loop, atol=1e-12)


def test_data_stage_writes_canonical_files(simulated):
    with np.load(simulated.spikes) as sim:
        assert sim["spikes"].dtype == np.int16 and sim["spikes"].shape == (600, 7)
        assert sim["weights"].shape == (7, 7)
    with np.load(simulated.digits) as d:
        assert d["images"].shape == (1797, 8, 8) and d["images"].max() <= 1.0
        assert len(np.intersect1d(d["train_index"], d["test_index"])) == 0
    manifest = json.loads(open(simulated.manifest).read())
    assert set(manifest["files"]) == {"digits.npz", "spikes.npz"}


def test_poisson_entropy_matches_scipy():
    rates = torch.tensor([0.1, 1.0, 3.5], dtype=torch.float64)
    assert float(poglm.poisson_entropy(rates)) == pytest.approx(
        sum(stats.poisson.entropy(r) for r in rates.numpy()), rel=1e-8
    )


def test_best_relabelling_recovers_permuted_truth():
    rng = np.random.default_rng(1)
    true = rng.normal(size=(6, 6))
    order = [0, 1, 2, 3, 5, 4]
    fitted = true[np.ix_(order, order)]
    assert poglm.best_relabelled_correlation(true, fitted, 4) == pytest.approx(1.0)
    assert np.corrcoef(true.ravel(), fitted.ravel())[0, 1] < 0.999


def test_observed_glm_recovers_couplings_without_hidden_neurons():
    rng = np.random.default_rng(3)
    sim = spikes.simulate_glm(rng, 4, 0, 3000, 3.0, 8, 3.0)
    weights, _, _ = glm_baseline.fit_observed_glm(sim["spikes"], sim["kernel"])
    assert np.corrcoef(weights.ravel(), sim["weights"].ravel())[0, 1] > 0.9


def test_poglm_fit_runs_and_reports_finite_numbers(simulated):
    sim = spikes.load_spikes(simulated.spikes)
    out = poglm.fit(sim, "eat_cubic", 0.5, 0, {"lr": 0.05, "steps": 5, "eval_draws": 1})
    assert np.isfinite(out["exact_elbo"]) and -1 <= out["corr_full"] <= 1
    n = sim["weights"].size
    assert len(out["coupling_sq_error"]) == len(out["coupling_sq_error_at_init"]) == n
    np.testing.assert_allclose(out["coupling_sq_error_at_init"], (sim["weights"] ** 2).ravel())


def test_vae_step_and_exact_elbo(simulated):
    train_x, test_x = vae.load_digits_npz(simulated.digits)
    cfg = {"n_latent": 4, "hidden": 8, "lr": 1e-3, "epochs": 1, "batch_size": 256, "eval_draws": 1}
    cfg["decoder_variance"] = 0.02
    out = vae.train_one(train_x[:256], test_x[:64], "gsm", 0.5, 0, cfg)
    assert np.isfinite(out["test_elbo"]) and len(out["train_elbo_curve"]) == 1
    assert len(out["test_elbo_per_image"]) == len(out["trivial_elbo_per_image"]) == 64
    assert out["test_elbo"] == pytest.approx(np.mean(out["test_elbo_per_image"]))
    mean_image_sse = ((test_x[:64] - train_x[:256].mean(0)) ** 2).sum(-1).numpy()
    np.testing.assert_allclose(out["trivial_elbo_per_image"], -mean_image_sse / (2 * 0.02), rtol=1e-5)


def test_bad_inputs_name_the_file(tmp_path):
    bad = tmp_path / "digits.npz"
    np.savez(bad, images=np.zeros((3, 8, 8)))
    with pytest.raises(InputError, match="digits.npz.*train_index"):
        vae.load_digits_npz(str(bad))
    with pytest.raises(InputError, match="missing arrays"):
        spikes.load_spikes(str(bad))
    yaml_file = tmp_path / "reported.yaml"
    yaml_file.write_text("reported:\n  x: {value: 1}\n")
    with pytest.raises(InputError, match="reported.yaml: .*entry 'x': 'where' is a required property"):
        load_reported(yaml_file)
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"method": "gsm"}))
    with pytest.raises(InputError, match="run.json"):
        evaluate.read_runs([str(run)])


def test_core_env_stages_do_not_import_torch(repo):
    """Rules with envs/core.yaml must not pull torch in (that env has none)."""
    modules = ["data", "glm_baseline", "evaluate", "figures"]
    code = "import importlib, sys\n" + "".join(
        f"importlib.import_module('repro.papers.poisson_eat.{m}')\n" for m in modules
    )
    code += "print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo / "scripts", check=True)
    assert out.stdout.strip() == "False"


def test_training_resumes_from_finished_runs_and_ignores_stale_ones(tmp_path, simulated):
    calls = []

    def compute():
        calls.append(1)
        return {"value": 1.5}

    assert train.cached(tmp_path, "run", compute) == {"value": 1.5}
    assert train.cached(tmp_path, "run", compute) == {"value": 1.5}
    assert len(calls) == 1
    inputs = [simulated.digits, simulated.spikes]
    assert train.run_key({"a": 1}, inputs) == train.run_key({"a": 1}, inputs)
    assert train.run_key({"a": 1}, inputs) != train.run_key({"a": 2}, inputs)


def test_vae_training_resumed_after_a_crash_equals_an_uninterrupted_run(tmp_path, simulated, monkeypatch):
    """Raise inside the training loop at epoch 2, rerun: the result equals an uninterrupted run bit for bit."""
    train_x, test_x = vae.load_digits_npz(simulated.digits)
    cfg = {"n_latent": 4, "hidden": 8, "lr": 1e-3, "epochs": 4, "batch_size": 64, "eval_draws": 2}
    cfg["decoder_variance"] = 0.02
    args = (train_x[:256], test_x[:64], "eat_cubic", 0.5, 3, cfg)
    clean = vae.train_one(*args, checkpoint=tmp_path / "clean.pt", fingerprint="f")
    original, calls = vae.relaxed_sample, []

    def crash_in_epoch_two(*a, **k):
        calls.append(1)
        if len(calls) == 2 * 4 + 1:  # 4 batches per epoch: first batch of epoch 2
            raise RuntimeError("killed")
        return original(*a, **k)

    monkeypatch.setattr(vae, "relaxed_sample", crash_in_epoch_two)
    with pytest.raises(RuntimeError, match="killed"):
        vae.train_one(*args, checkpoint=tmp_path / "resumed.pt", fingerprint="f")
    monkeypatch.setattr(vae, "relaxed_sample", original)
    assert torch.load(tmp_path / "resumed.pt", weights_only=False)["epoch"] == 1
    resumed = vae.train_one(*args, checkpoint=tmp_path / "resumed.pt", fingerprint="f")
    assert resumed == clean
