"""TALDA stages end to end on a tiny config: generated files, the runs store, metrics and claims."""

import json
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
import xarray as xr

from repro.papers.talda import data, evaluate, optimize
from repro.papers.talda.claims import CLAIMS

SETTINGS = {
    "data_seed": 0,
    "dims": [3],
    "couplings": [0.001, 1.0],
    "seeds": [0, 1],
    "mu": 0.3,
    "l_block": 1.0,
    "robust_ls": {"rows_per_dim": 2, "lam": 3.0},
    "yang": {"extent": 3.0, "grid_points": 61, "start_radius": 1.0},
    "iterations": 60,
    "tuned_scales": [0.25, 1],
    "fit": {"burn_in": 0.5, "floor": 1e-20},
}


class Paths(dict):
    __getattr__ = dict.__getitem__


def test_stages_produce_consistent_outputs(tmp_path, repo):
    files = Paths({name: str(tmp_path / f"{name}.npz") for name in ("quadratic", "robust_ls", "yang")})
    files["manifest"] = str(tmp_path / "manifest.json")
    data.main(SimpleNamespace(params=SimpleNamespace(settings=SETTINGS), output=files))
    manifest = json.loads(open(files.manifest).read())
    assert set(manifest["files"]) == {"quadratic.npz", "robust_ls.npz", "yang.npz"}
    with np.load(files.quadratic) as q:
        assert q["A_d3"].shape == (4, 3, 3)
        np.testing.assert_allclose(np.linalg.norm(q["B_d3"], ord=2, axis=(1, 2)), q["coupling_d3"], rtol=1e-10)
    store = str(tmp_path / "runs.zarr")
    optimize.main(SimpleNamespace(params=SimpleNamespace(settings=SETTINGS), input=files, output=Paths(runs=store)))
    ds = xr.open_zarr(store).load()
    assert dict(ds.error.sizes) == {"algorithm": 5, "steps": 2, "instance": 4 + 2 + 2, "iteration": 61}
    assert set(ds.family.values) == {"quadratic", "robust_ls", "yang"}
    out = Paths(metrics=str(tmp_path / "metrics.json"), claims=str(tmp_path / "claims.json"))
    evaluate.main(
        SimpleNamespace(
            input=Paths(runs=store, reported=str(repo / "resources/talda/reported.yaml")),
            output=out,
            params=SimpleNamespace(settings=SETTINGS, scale="smoke"),
        )
    )
    claims = json.loads(open(out.claims).read())["claims"]
    assert {c["verdict"] for c in claims} <= {"pass", "fails"} and len(claims) == len(CLAIMS)


def test_stages_do_not_import_torch(repo):
    """Every TALDA rule runs in envs/core.yaml, which has no torch."""
    code = "import importlib, sys\n" + "".join(
        f"importlib.import_module('repro.papers.talda.{m}')\n" for m in ("data", "optimize", "evaluate", "figures")
    )
    code += "print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo / "scripts", check=True)
    assert out.stdout.strip() == "False"


def test_rejection_rate_counts_rejected_over_active_iterations():
    ds = xr.Dataset(
        {"rejected": (("steps", "instance"), [[1.0, 3.0, 0.0]]), "active": (("steps", "instance"), [[10.0, 10, 5]])},
        coords={"steps": ["theory"], "family": ("instance", ["quadratic", "quadratic", "yang"])},
    )
    rates = evaluate.rejection_rates(ds)["theory"]
    assert rates == {"quadratic": 0.2, "yang": 0.0, "all": 4 / 25}


def test_optimize_rerun_after_a_crash_equals_an_uninterrupted_run(tmp_path, monkeypatch):
    """The runs are deterministic (no random state after the data stage): an optimize job killed in its loop
    leaves no store, and the rerun writes the same runs bit for bit."""
    files = Paths({name: str(tmp_path / f"{name}.npz") for name in ("quadratic", "robust_ls", "yang")})
    files["manifest"] = str(tmp_path / "manifest.json")
    data.main(SimpleNamespace(params=SimpleNamespace(settings=SETTINGS), output=files))

    def job(name):
        return SimpleNamespace(params=SimpleNamespace(settings=SETTINGS), input=files, output=Paths(runs=name))

    optimize.main(job(str(tmp_path / "clean.zarr")))
    original, calls = optimize.run, []

    def crash(*a, **k):
        calls.append(1)
        if len(calls) == 7:
            raise RuntimeError("killed")
        return original(*a, **k)

    monkeypatch.setattr(optimize, "run", crash)
    with pytest.raises(RuntimeError, match="killed"):
        optimize.main(job(str(tmp_path / "resumed.zarr")))
    assert not (tmp_path / "resumed.zarr").exists()
    monkeypatch.setattr(optimize, "run", original)
    optimize.main(job(str(tmp_path / "resumed.zarr")))
    clean, resumed = xr.open_zarr(tmp_path / "clean.zarr").load(), xr.open_zarr(tmp_path / "resumed.zarr").load()
    xr.testing.assert_identical(clean, resumed)
