"""Stage: Darcy and Navier-Stokes fields in the canonical layout (repro.data.fields.store).

- darcy_lo.zarr / darcy_hi.zarr: neuraloperator 0.3.0's Darcy samples (train and test at 16x16, a second
  test set at 32x32 for zero-shot resolution), variables ``permeability`` and ``pressure`` (time = 1);
- ns_lo.zarr / ns_hi.zarr: vorticity trajectories. ``source: simulator`` runs the FNO recipe
  (repro.data.fields.simulators): training trajectories at the low resolution, test trajectories at the
  high one, whose every other grid point gives the low-resolution test set; ``source: fno_mat`` reads
  the FNO release's file (e.g. ns_V1e-3_N5000_T50.mat: only the first ``n_train`` and last ``n_test`` samples
  are read from a v7.3 file) and subsamples the same way; ``source: pdebench`` reads a PDEBench 2-D
  incompressible Navier-Stokes file (``velocity`` (sample, time, x, y, 2)) one sample at a time, every
  ``time_stride``-th frame, block-averaged to ``test_resolution`` and turned into vorticity (central
  differences on the unit square);
- manifest.json: sources, settings, and the size and sha256 of each input file and store.
"""

from __future__ import annotations

import numpy as np

from repro.data.fields import neuraloperator, pdebench, readers, simulators
from repro.data.fields.store import make_dataset, write_fields
from repro.workflow.io import InputError
from repro.workflow.manifest import file_record, write_manifest


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


def block_mean(field: np.ndarray, n: int) -> np.ndarray:
    """Average the trailing (y, x) axes down to n x n."""
    factor = field.shape[-1] // n
    if factor * n != field.shape[-1] or field.shape[-2] != field.shape[-1]:
        raise ValueError(f"grid {field.shape[-2:]} is not a square multiple of {n}")
    return field.reshape(*field.shape[:-2], n, factor, n, factor).mean(axis=(-1, -3))


def pdebench_vorticity(cfg: dict) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) vorticity (sample, time, y, x) at test_resolution from a PDEBench 2-D NS file, per sample."""
    meta = pdebench.describe(cfg["path"])
    if meta.layout != "ns_incom_2d":
        raise InputError(cfg["path"], f"is PDEBench layout {meta.layout}; the NS task reads ns_incom_2d files")
    n_train, n_test = cfg["n_train"], cfg["n_test"]
    if n_train + n_test > meta.n_samples:
        raise InputError(cfg["path"], f"has {meta.n_samples} samples; the config asks for {n_train} + {n_test}")
    stride = cfg.get("time_stride", 1)

    def one(i: int) -> np.ndarray:
        velocity = pdebench.sample(meta, i, stride)[: cfg["frames"], :2]
        return block_mean(pdebench.vorticity(velocity, meta.spacing["x"], meta.spacing["y"]), cfg["test_resolution"])

    train = np.stack([one(i) for i in range(n_train)])
    test = np.stack([one(i) for i in range(meta.n_samples - n_test, meta.n_samples)])
    return train, test


def navier_stokes(cfg: dict, seed: int) -> dict:
    if cfg["source"] == "simulator":
        train, test_hi = simulate(cfg, seed)
        source = f"simulator navier_stokes_2d (FNO forcing, visc {cfg['visc']}, dt {cfg['dt']})"
        record = cfg["record_every"]
    else:
        if cfg["source"] == "pdebench":
            train, test_hi = pdebench_vorticity(cfg)
            source = f"PDEBench ns_incom_2d {cfg['path']}"
        else:
            total = readers.fno_samples(cfg["path"])
            if cfg["n_train"] + cfg["n_test"] > total:
                raise InputError(
                    cfg["path"], f"has {total} samples; the config asks for {cfg['n_train']} + {cfg['n_test']}"
                )
            w = readers.fno_navier_stokes(cfg["path"], [slice(0, cfg["n_train"]), slice(total - cfg["n_test"], total)])
            w = w[:, : cfg["frames"]]
            train, test_hi = w[: cfg["n_train"]], w[cfg["n_train"] :]
            source = f"FNO release {cfg['path']}"
        factor = test_hi.shape[-1] // cfg["resolution"]
        train = train[..., ::factor, ::factor]
        record = cfg["record_every"]
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
    ns = settings["ns"]
    inputs = [ns["path"]] if ns["source"] != "simulator" else []
    write_manifest(
        job.output.manifest,
        source="embedded" if not inputs else "local",
        producer="repro.papers.gpo.data",
        files=[file_record(p, role="input") for p in inputs]
        + [file_record(getattr(job.output, name), role="output") for name in stores],
        licence="neuraloperator data: MIT; "
        + ("generated" if not inputs else "the FNO release / PDEBench (CC BY 4.0)"),
        settings=settings,
        details={"seed": seed, "sources": {name: ds.attrs["source"] for name, ds in stores.items()}},
    )
