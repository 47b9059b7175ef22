"""Stage: the three next-step tasks in the canonical fields layout (repro.data.fields.store), one store each.

Every store holds ``state`` (sample, time, channel, y, x) and, where the task has them, static coefficients
``static`` (sample, k, y, x); attrs give dx, dy, dt, periodicity and where the advecting velocity is
(``velocity`` = ``static:<i>,<j>`` or ``state:<i>,<j>``, channel indices of (u, v) in domain units per time),
which the interpretability claim compares the learned displacements with.
- advection.zarr: simulated, a passive scalar transported on the periodic unit square by a stationary
  divergence-free velocity (static, repro.data.fields.simulators.advect_periodic); at paper scale The Well's
  ``shear_flow`` (tracer, pressure, velocity: the velocity is a state channel);
- wave.zarr: simulated, pressure and its rate of the acoustic wave equation with a smooth varying sound speed
  (static), leapfrog, periodic; at paper scale The Well's ``acoustic_scattering_maze`` (pressure, velocity; the
  time-constant density and sound speed as statics; open boundaries, so not periodic);
- burgers.zarr: neuraloperator 0.3.0's Burgers trajectories through the package-data source; at paper scale
  PDEBench's 1-D Burgers file.
The Well and PDEBench files are read one trajectory at a time and written block by block (memory flat in the
number of trajectories); their grid spacing comes from the files' coordinates. manifest.json records each input
file's size and sha256 and each store's.
"""

from __future__ import annotations

import numpy as np

from repro.data.fields import neuraloperator, pdebench, simulators, the_well
from repro.data.fields.store import FieldsWriter, make_dataset, write_fields
from repro.workflow.io import InputError
from repro.workflow.manifest import file_record, write_manifest


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
        "velocity": "static:0,1",
        "source": "simulator advect_periodic (stationary divergence-free velocity, RK4)",
    }
    return _with_static(
        {"state": scalar[:, :, None]}, velocity, splits(cfg["n_train"], cfg["n_test"]), attrs, ["scalar"]
    )


def _with_static(state: dict, static: np.ndarray, split: np.ndarray, attrs: dict, names: list[str]):
    return make_dataset(
        state, split, attrs, channels={"state": names}, extra={"static": (("sample", "k", "y", "x"), static)}
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
    return _with_static(
        {"state": state}, speed[:, None], splits(cfg["n_train"], cfg["n_test"]), attrs, ["pressure", "rate"]
    )


def burgers_neuraloperator(folder: str, cfg: dict):
    u, visc = neuraloperator.neuraloperator_burgers(folder)
    u = u[: cfg["n_train"] + cfg["n_test"]]
    n = u.shape[-1]
    attrs = {
        "dx": 1.0 / n,
        "dy": 1.0,
        "dt": 1.0,
        "periodic": True,
        "visc": visc,
        "source": "neuraloperator==0.3.0 wheel, neuralop/datasets/data/burgers_lowres.pt",
    }
    return make_dataset(
        {"state": u[:, :, None, None, :]},
        splits(cfg["n_train"], len(u) - cfg["n_train"]),
        attrs,
        channels={"state": ["u"]},
    )


def stream_trajectories(path: str, parts: list[tuple[str, object, list[int]]], read, attrs: dict, names: list[str]):
    """Write trajectories one at a time: ``parts`` = (split, file meta, trajectory indices); ``read(meta, i)`` ->
    (state (time, channel, y, x), static (k, y, x) or None)."""
    first_meta, first = parts[0][1], parts[0][2][0]
    state0, static0 = read(first_meta, first)
    total = sum(len(idx) for _, _, idx in parts)
    variables = {"state": (("sample", "time", "channel", "y", "x"), (total, *state0.shape), (1, 1, *state0.shape[1:]))}
    if static0 is not None and len(static0):
        variables["static"] = (("sample", "k", "y", "x"), (total, *static0.shape))
    labels, cursor = [], 0
    with FieldsWriter(path, variables, attrs, channels=names) as writer:
        for split, meta, indices in parts:
            for i in indices:
                state, static = read(meta, i)
                if state.shape != state0.shape:
                    raise InputError(meta.path, f"trajectory {i} is {state.shape}, the first was {state0.shape}")
                writer.write("state", cursor, state[None])
                if "static" in variables:
                    writer.write("static", cursor, static[None])
                labels.append(split)
                cursor += 1
        writer.finish(np.array(labels))


def the_well_task(path: str, cfg: dict) -> tuple[list[str], str]:
    """A The Well data set's train and test files, ``n_train`` / ``n_test`` trajectories, one at a time."""
    parts, metas = [], []
    for split, key in (("test", "test_files"), ("train", "train_files")):  # test files checked first
        budget = cfg[f"n_{split}"]
        for file in cfg[key]:
            meta = the_well.describe(file)
            metas.append(meta)
            take = list(range(min(meta.n_traj, budget)))
            budget -= len(take)
            if take:
                parts.append((split, meta, take))
    parts.sort(key=lambda p: p[0] != "train")  # train first in the store
    meta = metas[0]
    for other in metas[1:]:
        if other.shape != meta.shape or not np.isclose(other.dt, meta.dt):
            raise InputError(other.path, f"grid {other.shape} / dt {other.dt} differ from {meta.path}'s")
    fields, statics = cfg["fields"], cfg.get("static_fields", [])
    stride = cfg.get("time_stride", 1)
    _, names = the_well.trajectory(meta, 0, fields)

    def read(m, i):
        state, _ = the_well.trajectory(m, i, fields)
        return state[::stride], the_well.statics(m, i, statics) if statics else None

    velocity = ",".join(str(names.index(c)) for c in ("velocity_x", "velocity_y")) if "velocity_x" in names else ""
    periodic = all(meta.periodic.values())
    attrs = {
        "dx": meta.spacing["x"],
        "dy": meta.spacing["y"],
        "dt": meta.dt * stride,
        "periodic": periodic,
        "periodic_axes": ",".join(a for a, p in meta.periodic.items() if p),
        "boundary_cells": int(sum(m.sum() for m in meta.boundary.values())),
        "velocity": f"state:{velocity}" if velocity else "",
        "source": f"The Well {cfg['name']}",
        "dataset": cfg["name"],
    }
    stream_trajectories(path, parts, read, attrs, names)
    return [m.path for m in metas], attrs["source"]


def pdebench_task(path: str, cfg: dict) -> tuple[list[str], str]:
    """PDEBench samples: the first n_train for training, the last n_test for testing, one at a time."""
    meta = pdebench.describe(cfg["path"])
    n_train, n_test = cfg["n_train"], cfg["n_test"]
    if n_train + n_test > meta.n_samples:
        raise InputError(cfg["path"], f"has {meta.n_samples} samples; the config asks for {n_train} + {n_test}")
    stride = cfg.get("time_stride", 1)
    parts = [
        ("train", meta, list(range(n_train))),
        ("test", meta, list(range(meta.n_samples - n_test, meta.n_samples))),
    ]
    attrs = {
        "dx": meta.spacing["x"],
        "dy": meta.spacing.get("y", 1.0),
        "dt": meta.dt * stride,
        "periodic": True,
        "source": f"PDEBench {meta.layout} {cfg['path']}",
        "dataset": f"pdebench_{meta.layout}",
    }
    stream_trajectories(path, parts, lambda m, i: (pdebench.sample(m, i, stride), None), attrs, meta.channels)
    return [cfg["path"]], attrs["source"]


def main(job) -> None:
    settings = job.params.settings
    seed = int(settings["data_seed"])
    tasks = settings["tasks"]
    inputs, sources = [], {}
    for name in ("advection", "wave"):
        cfg = tasks[name]
        if cfg.get("source", "simulator") == "the_well":
            files, sources[name] = the_well_task(getattr(job.output, name), cfg)
            inputs += files
        else:
            ds = advection(cfg, seed) if name == "advection" else wave(cfg, seed)
            write_fields(getattr(job.output, name), ds)
            sources[name] = ds.attrs["source"]
    burgers = tasks["burgers"]
    if burgers.get("source", "neuraloperator") == "pdebench":
        files, sources["burgers"] = pdebench_task(job.output.burgers, burgers)
        inputs += files
    else:
        ds = burgers_neuraloperator(job.input.package, burgers)
        write_fields(job.output.burgers, ds)
        sources["burgers"] = ds.attrs["source"]
    write_manifest(
        job.output.manifest,
        source="local" if inputs else "embedded",
        producer="repro.papers.flower.data",
        files=[file_record(p, role="input") for p in dict.fromkeys(inputs)]
        + [file_record(getattr(job.output, n), role="output") for n in ("advection", "wave", "burgers")],
        licence="generated; neuraloperator data: MIT" if not inputs else "The Well: CC BY 4.0; PDEBench: CC BY 4.0",
        settings=settings,
        details={"sources": sources},
    )
