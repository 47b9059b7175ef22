"""Neural Control stages on a tiny config: data, optimisation runs, gradient checks, metrics and claims."""

import json
from types import SimpleNamespace

import numpy as np
import pytest

from repro.papers.neural_control import data, evaluate, gradients, learned, optimize
from repro.workflow.io import InputError

SETTINGS = {
    "data_seed": 0,
    "rod": {"nodes": 11, "length": 1.0, "ea": 1.0e4, "ei": 1.0, "compression": 0.1},
    "cases": 2,
    "tasks": {"t1": {"steps": 4, "bound": 0.02}, "t3": {"steps": 4, "bound": 0.05}},
    "budget": {"t1": 24, "t3": 24},
    "seeds": [0, 1],
    "controller": {"hidden": [8, 8], "out_scale": 0.1},
    "methods": {
        "adjoint": {"horizon": 2, "lr": 0.01, "patience": 5, "loss_threshold": 1e-10},
        "spsa": {"lr": 0.01, "perturbation": 0.05, "loss_threshold": 1e-10},
        "cem": {"population": 3, "elites": 2, "keep_elites": 1, "sigma": 0.1, "momentum": 0.2, "loss_threshold": 1e-10},
    },
    "gradients": {"fd_step": 1e-6, "checks": 2, "memory_nodes": 7, "newton_iterations": [2, 4]},
    "learned": {
        "width": 6,
        "rho": 0.9,
        "paths": 4,
        "heldout": 2,
        "path_steps": 4,
        "fit_steps": 30,
        "lr": 0.03,
        "cases": 1,
        "steps": 4,
        "budget": 16,
        "fd_step": 1e-6,
    },
}


class Paths(dict):
    __getattr__ = dict.__getitem__


def job(settings=SETTINGS, **parts):
    return SimpleNamespace(params=SimpleNamespace(settings=settings, scale="smoke", seed=0), **parts)


def test_stages_write_consistent_outputs(tmp_path, repo):
    files = Paths({t: str(tmp_path / f"{t}.npz") for t in SETTINGS["tasks"]} | {"manifest": str(tmp_path / "m.json")})
    data.main(job(output=files))
    assert set(json.loads(open(files.manifest).read())["files"]) == {"t1.npz", "t3.npz"}
    runs = []
    for task in SETTINGS["tasks"]:
        out = Paths(runs=str(tmp_path / f"runs_{task}.npz"))
        optimize.main(job(input=Paths(cases=files[task]), output=out, wildcards=SimpleNamespace(task=task)))
        with np.load(out.runs) as r:
            assert r["best_loss"].shape == (4, 2, 2) and np.all(r["solves"] <= 24)
        runs.append(out.runs)
    grads = Paths(gradients=str(tmp_path / "gradients.json"))
    gradients.main(job(input=Paths(cases=files.t1), output=grads))
    deq = Paths(learned=str(tmp_path / "learned.json"))
    learned.main(job(input=Paths(cases=files.t1), output=deq))
    result = Paths(metrics=str(tmp_path / "metrics.json"), claims=str(tmp_path / "claims.json"))
    evaluate.main(
        job(
            input=SimpleNamespace(
                runs=runs,
                cases=[files.t1, files.t3],
                gradients=grads.gradients,
                learned=deq.learned,
                reported=str(repo / "resources/neural-control/reported.yaml"),
            ),
            output=result,
        )
    )
    metrics = json.loads(open(result.metrics).read())
    assert metrics["fd_max_relative_error"] < 1e-5
    assert metrics["adjoint_memory_growth"] == 1.0
    assert metrics["learned"]["ift_fd_relative_error_controls"] < 1e-5
    assert len(metrics["learned"]["methods"]["adjoint_rhc"]["median_loss_per_seed"]) == 2
    claims = json.loads(open(result.claims).read())["claims"]
    assert {c["id"] for c in claims} >= {"nc_rhc_beats_spsa_t1", "nc_rhc_branch_success"}


def test_branch_success_counts_cases_and_seeds_against_the_target_branch():
    runs = {
        "methods": np.array(["adjoint_rhc"]),
        "seeds": np.array([0, 1]),
        "best_loss": np.ones((1, 2, 2)),
        "solves": np.ones((1, 2, 2)),
        "updates": np.ones((1, 2, 2)),
        "wall_s": np.ones((1, 2, 2)),
        "failures": np.zeros((1, 2, 2)),
        "branch": np.array([[[1, -1], [-1, -1]]]),
        "initial_loss": np.full((2, 2), 3.0),
    }
    out = evaluate.task_metrics(runs, {"branch": np.array([1, -1])})
    assert out["methods"]["adjoint_rhc"]["branch_success"] == pytest.approx(0.75)
    assert out["initial_loss"] == [[3.0, 3.0], [3.0, 3.0]]
    assert out["methods"]["adjoint_rhc"]["best_loss"] == [[1.0, 1.0], [1.0, 1.0]]


def test_cases_file_missing_an_array_is_named(tmp_path):
    path = tmp_path / "t1.npz"
    np.savez(path, x0=np.zeros(4))
    with pytest.raises(InputError, match="t1.npz.*missing arrays"):
        optimize.load_cases(str(path), "t1")
