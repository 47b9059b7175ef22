"""Stage: Darcy and Navier-Stokes fields in the canonical layout (repro.data.fields.store).

- darcy_lo.zarr / darcy_hi.zarr: neuraloperator 0.3.0's Darcy samples (train and test at 16x16, a second
  test set at 32x32 for zero-shot resolution), variables ``permeability`` and ``pressure`` (time = 1);
- ns_lo.zarr / ns_hi.zarr: vorticity trajectories. ``source: simulator`` runs the FNO recipe
  (repro.data.fields.simulators): training trajectories at the low resolution, test trajectories at the
  high one, whose every other grid point gives the low-resolution test set; ``source: fno_mat`` reads
  the FNO release's file (e.g. ns_V1e-3_N5000_T50.mat) and subsamples the same way;
- manifest.json: sources, settings and sha256 of every store.
"""

from __future__ import annotations

import numpy as np

from repro.data.fields import neuraloperator, readers, simulators
from repro.data.fields.store import make_dataset, write_fields
from repro.workflow.io import sha256, write_json


def darcy(folder: str, n_train: int) -> dict:
    a_train, u_train = neuraloperator.neuraloperator_darcy(folder, "train_16")
    a_test, u_test = neuraloperator.neuraloperator_darcy(folder, "test_16")
    a_hi, u_hi = neuraloperator.neuraloperator_darcy(folder, "test_32")
    source = "neuraloperator==0.3.0 wheel, neuralop/datasets/data/darcy_*.pt"
    lo_split = np.array(["train"] * n_train + ["test"] * len(a_test))
    attrs = {"dt": 1.0, "source": source, "periodic": False}

    def ds(a, u, split, n):
        return make_dataset(
            {"permeability": a[:, None], "pressure": u[:, None]}, split, attrs | {"dx": 1.0 / n, "dy": 1.0 / n}
        )

    return {
        "darcy_lo": ds(
            np.concatenate([a_train[:n_train], a_test]),
            np.concatenate([u_train[:n_train], u_test]),
            lo_split,
            a_test.shape[-1],
        ),
        "darcy_hi": ds(a_hi, u_hi, np.array(["test"] * len(a_hi)), a_hi.shape[-1]),
    }


def simulate(cfg: dict, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train at the low resolution, test at the high resolution) vorticity (sample, time, y, x)."""

    def run(samples: int, n: int, key: int) -> np.ndarray:
        w0 = simulators.gaussian_random_field(np.random.default_rng([seed, key]), samples, n)
        return simulators.navier_stokes_2d(
            w0,
            visc=cfg["visc"],
            dt=cfg["dt"],
            record_every=cfg["record_every"],
            frames=cfg["frames"],
            forcing=simulators.fno_forcing(n),
        )

    return run(cfg["n_train"], cfg["resolution"], 1), run(cfg["n_test"], cfg["test_resolution"], 2)


def navier_stokes(cfg: dict, seed: int) -> dict:
    if cfg["source"] == "simulator":
        train, test_hi = simulate(cfg, seed)
        source = f"simulator navier_stokes_2d (FNO forcing, visc {cfg['visc']}, dt {cfg['dt']})"
        record = cfg["record_every"]
    else:
        w = readers.fno_navier_stokes(cfg["path"])[:, : cfg["frames"]]
        train, test_hi = w[: cfg["n_train"]], w[-cfg["n_test"] :]
        train = train[..., :: test_hi.shape[-1] // cfg["resolution"], :: test_hi.shape[-1] // cfg["resolution"]]
        source, record = f"FNO release {cfg['path']}", cfg["record_every"]
    factor = test_hi.shape[-1] // train.shape[-1]
    test_lo = test_hi[..., ::factor, ::factor]
    attrs = {"dt": record, "source": source, "periodic": True, "visc": cfg["visc"]}
    n_lo, n_hi = train.shape[-1], test_hi.shape[-1]
    return {
        "ns_lo": make_dataset(
            {"vorticity": np.concatenate([train, test_lo])},
            np.array(["train"] * len(train) + ["test"] * len(test_lo)),
            attrs | {"dx": 1.0 / n_lo, "dy": 1.0 / n_lo},
        ),
        "ns_hi": make_dataset(
            {"vorticity": test_hi}, np.array(["test"] * len(test_hi)), attrs | {"dx": 1.0 / n_hi, "dy": 1.0 / n_hi}
        ),
    }


def main(job) -> None:
    settings = job.params.settings
    seed = int(settings["data_seed"])
    stores = darcy(job.input.package, settings["darcy"]["n_train"]) | navier_stokes(settings["ns"], seed)
    for name, ds in stores.items():
        write_fields(getattr(job.output, name), ds)
    write_json(
        job.output.manifest,
        {
            "source": "embedded" if settings["ns"]["source"] == "simulator" else "local",
            "generator": "repro.papers.gpo.data",
            "seed": seed,
            "settings": settings,
            "files": {
                f"{name}.zarr": {"sha256": sha256(getattr(job.output, name)), "source": ds.attrs["source"]}
                for name, ds in stores.items()
            },
        },
    )
