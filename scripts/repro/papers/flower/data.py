"""Stage: the three next-step tasks in the canonical fields layout (repro.data.fields.store).

- advection.zarr: a passive scalar (``scalar``) transported on the periodic unit square by a stationary
  divergence-free velocity (``velocity`` (sample, component, y, x), stored for the interpretability
  check), pseudo-spectral RK4 (repro.data.fields.simulators.advect_periodic);
- wave.zarr: pressure and its rate (``state``, channels ``pressure``, ``rate``) of the acoustic wave
  equation with a smooth spatially varying sound speed (``speed``), leapfrog, periodic;
- burgers.zarr: neuraloperator 0.3.0's Burgers trajectories (``u``, 1-D), through the package-data source;
  at full scale The Well's HDF5 files (``source: the_well``) replace the two simulators;
- manifest.json: settings, sources and sha256 of each store.
"""

from __future__ import annotations

import numpy as np

from repro.data.fields import neuraloperator, readers, simulators
from repro.data.fields.store import make_dataset, write_fields
from repro.workflow.io import sha256, write_json


def splits(n_train: int, n_test: int) -> np.ndarray:
    return np.array(["train"] * n_train + ["test"] * n_test)


def smooth_field(rng: np.random.Generator, samples: int, n: int) -> np.ndarray:
    """Unit-variance smooth random fields (power-law spectrum |k|^-5)."""
    return simulators.power_law_noise(rng, samples, n, beta=-5.0)


def advection(cfg: dict, seed: int):
    rng = np.random.default_rng([seed, 1])
    total = cfg["n_train"] + cfg["n_test"]
    n = cfg["resolution"]
    velocity = simulators.stream_velocity(rng, total, n, modes=cfg["modes"], amplitude=cfg["speed"])
    dt = cfg["frame_dt"] / cfg["steps_per_frame"]
    scalar = simulators.advect_periodic(
        smooth_field(rng, total, n), velocity, dt=dt, steps_per_frame=cfg["steps_per_frame"], frames=cfg["frames"]
    )
    attrs = {
        "dx": 1.0 / n,
        "dy": 1.0 / n,
        "dt": cfg["frame_dt"],
        "periodic": True,
        "source": "simulator advect_periodic (stationary divergence-free velocity, RK4)",
    }
    return make_dataset(
        {"scalar": scalar},
        splits(cfg["n_train"], cfg["n_test"]),
        attrs,
        extra={"velocity": (("sample", "component", "y", "x"), velocity)},
    )


def wave(cfg: dict, seed: int):
    rng = np.random.default_rng([seed, 2])
    total = cfg["n_train"] + cfg["n_test"]
    n = cfg["resolution"]
    speed = cfg["speed"] * (1.0 + cfg["contrast"] * np.tanh(smooth_field(rng, total, n)))
    x = np.arange(n) / n
    xx, yy = np.meshgrid(x, x, indexing="xy")
    centre = rng.uniform(0, 1, size=(total, 2, 1, 1))
    dxc, dyc = (xx - centre[:, 0] + 0.5) % 1 - 0.5, (yy - centre[:, 1] + 0.5) % 1 - 0.5
    p0 = np.exp(-(dxc**2 + dyc**2) / (2 * cfg["pulse_width"] ** 2))
    dt = cfg["frame_dt"] / cfg["steps_per_frame"]
    state = simulators.acoustic_wave(p0, speed, dt=dt, steps_per_frame=cfg["steps_per_frame"], frames=cfg["frames"])
    attrs = {
        "dx": 1.0 / n,
        "dy": 1.0 / n,
        "dt": cfg["frame_dt"],
        "periodic": True,
        "source": "simulator acoustic_wave (leapfrog, variable sound speed)",
    }
    return make_dataset(
        {"state": state},
        splits(cfg["n_train"], cfg["n_test"]),
        attrs,
        channels={"state": ["pressure", "rate"]},
        extra={"speed": (("sample", "y", "x"), speed)},
    )


def burgers(folder: str, cfg: dict):
    u, visc = neuraloperator.neuraloperator_burgers(folder)
    u = u[: cfg["n_train"] + cfg["n_test"]]
    n = u.shape[-1]
    attrs = {
        "dx": 1.0 / n,
        "dt": 1.0,
        "periodic": True,
        "visc": visc,
        "source": "neuraloperator==0.3.0 wheel, neuralop/datasets/data/burgers_lowres.pt",
    }
    return make_dataset({"u": u}, splits(cfg["n_train"], len(u) - cfg["n_train"]), attrs)


def the_well(cfg: dict):
    """Train and test files of one The Well data set (2-D), concatenated, fields as channels."""
    parts, names, dt = [], None, 1.0
    labels = []
    for split in ("train", "test"):
        for path in cfg[f"{split}_files"]:
            fields, names, dt = readers.the_well_hdf5(path, cfg["fields"])
            parts.append(fields)
            labels += [split] * len(fields)
    state = np.concatenate(parts)
    n = state.shape[-1]
    attrs = {
        "dx": 1.0 / n,
        "dy": 1.0 / state.shape[-2],
        "dt": dt,
        "periodic": cfg["periodic"],
        "source": f"The Well {cfg['name']}",
    }
    return make_dataset({"state": state}, np.array(labels), attrs, channels={"state": names})


def main(job) -> None:
    settings = job.params.settings
    seed = int(settings["data_seed"])
    tasks = settings["tasks"]
    stores = {"burgers": burgers(job.input.package, tasks["burgers"])}
    if tasks["advection"].get("source", "simulator") == "the_well":
        stores |= {"advection": the_well(tasks["advection"]), "wave": the_well(tasks["wave"])}
    else:
        stores |= {"advection": advection(tasks["advection"], seed), "wave": wave(tasks["wave"], seed)}
    for name, ds in stores.items():
        write_fields(getattr(job.output, name), ds)
    write_json(
        job.output.manifest,
        {
            "generator": "repro.papers.flower.data",
            "seed": seed,
            "settings": settings,
            "files": {
                f"{name}.zarr": {"sha256": sha256(getattr(job.output, name)), "source": ds.attrs["source"]}
                for name, ds in stores.items()
            },
        },
    )
