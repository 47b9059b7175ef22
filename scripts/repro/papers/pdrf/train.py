"""Stage: train the rectified-flow variants (and, where configured, the deterministic U-Net), then forecast the
test sequences into a store.

Conditional rectified flow over the future sequence x1 (frames as channels) given the past frames c:
x_t = (1 - t) x0 + t x1, x0 ~ N(0, I), t ~ U(0, 1), on data scaled to [-1, 1].
- ``data`` parameterisation (PDRF): the network predicts x1_hat = D(x_t, t, c), loss |x1_hat - x1|^2; the
  velocity is induced, v = (x1_hat - x_t) / max(1 - t, eps), so an Euler step that reaches t = 1 lands on
  x1_hat exactly and -x_t / (1 - t) pulls deviations back (the restoring effect);
- ``velocity`` parameterisation: the network predicts v = V(x_t, t, c), loss |v - (x1 - x0)|^2;
- the soft semi-Lagrangian teacher (``teacher`` > 0): + teacher * sum_k w_k |LP(x1_hat_k) - LP(x_SL,k)|^2,
  LP a 4x4 average pool, x_SL the last past frame backtracked along Lucas-Kanade motion (LP(x_SL) comes from
  the data stage's ``sl_lowpass``), w_k falling linearly with the lead k (transport is trusted less the further
  ahead);
- ``deterministic``: the same backbone maps c to x1 with MSE.
All variants share one backbone: repro.learning.operators.UNet over (x_t, c, t) as channels plus a pointwise
skip from those inputs whose weight is modulated by t (what lets a velocity network carry -x0 through at every
t, which the 8-wide U-Net alone cannot), with the same widths, epochs and learning-rate schedule.
Missing pixels (NaN in the store) are no echo in the inputs and are left out of the loss.

Batches are read from the store on demand (repro.data.fields.store.Samples; held in memory when smaller than
``train.cache_mb``), and test forecasts are written chunk by chunk, so memory stays flat in the data size.
Outputs: forecasts.zarr (one variable per ``<variant>_s<seed>``, ``pdrf_s<seed>_nfe<n>`` for the NFE sweep:
(sample, lead, y, x) on the 0-255 scale, the test samples in store order), training.json (histories,
parameter counts, exact checks).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from repro.data.fields.store import FieldsWriter, Samples, open_fields, split_labels
from repro.learning.fields_training import fit_arrays
from repro.learning.operators import UNet, count_parameters
from repro.learning.training import fingerprint_of
from repro.papers.pdrf.nowcast import TEACHER_POOL
from repro.workflow.device import pick_device
from repro.workflow.io import write_json

EPS = 1e-3


def to_unit(x: np.ndarray) -> np.ndarray:
    return (x / 127.5 - 1.0).astype(np.float32)


def to_vil(x: np.ndarray) -> np.ndarray:
    return ((x + 1.0) * 127.5).astype(np.float32)


class Nowcaster(torch.nn.Module):
    """One backbone; ``param`` says what its output means ('data', 'velocity' or 'deterministic')."""

    def __init__(self, param: str, frames_in: int, frames_out: int, width: int, levels: int):
        super().__init__()
        if param not in ("data", "velocity", "deterministic"):
            raise ValueError(f"unknown parameterisation {param!r}")
        self.param, self.frames_in = param, frames_in
        cin = frames_in if param == "deterministic" else frames_out + frames_in + 1
        self.net = UNet(cin, frames_out, width=width, levels=levels, periodic=False)
        self.skip = torch.nn.Conv2d(cin, frames_out, 1)
        self.skip_t = torch.nn.Conv2d(cin, frames_out, 1)

    def forward(self, x_t: torch.Tensor, t: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        if self.param == "deterministic":
            return self.net(cond) + self.skip(cond) + self.skip_t(cond)
        time = t.view(-1, 1, 1, 1).expand(-1, 1, *x_t.shape[-2:])
        z = torch.cat([x_t, cond, time], dim=1)
        return self.net(z) + self.skip(z) + t.view(-1, 1, 1, 1) * self.skip_t(z)

    def velocity(self, x_t: torch.Tensor, t: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        out = self(x_t, t, cond)
        if self.param == "velocity":
            return out
        return (out - x_t) / torch.clamp(1 - t, min=EPS).view(-1, 1, 1, 1)


def euler(velocity, x0: torch.Tensor, nfe: int, inject: tuple[float, torch.Tensor] | None = None) -> torch.Tensor:
    """Integrate dx/dt = velocity(x, t) from t = 0 to 1 in ``nfe`` Euler steps; ``inject`` = (t, delta) adds
    a perturbation to the state when that time is reached."""
    x, dt = x0, 1.0 / nfe
    for k in range(nfe):
        t = k * dt
        if inject is not None and abs(t - inject[0]) < 1e-9:
            x = x + inject[1]
        x = x + dt * velocity(x, torch.full((len(x),), t, dtype=x.dtype, device=x.device))
    return x


def teacher_weights(frames_out: int) -> torch.Tensor:
    return torch.linspace(1.0, 1.0 / frames_out, frames_out).view(1, -1, 1, 1)


def unit_batch(batch, frames_in: int):
    """(cond, x1, valid, sl_lowpass) on the [-1, 1] scale from a batch (sequences, LP(x_SL)) on the 0-255 scale;
    missing pixels are no echo (-1) in cond and x1, and False in ``valid``."""
    seq, sl_low = batch
    seq = seq / 127.5 - 1.0
    cond, x1 = torch.nan_to_num(seq[:, :frames_in], nan=-1.0), seq[:, frames_in:]
    valid = torch.isfinite(x1)
    return cond, torch.where(valid, x1, torch.full_like(x1, -1.0)), valid, sl_low / 127.5 - 1.0


def masked_mse(out: torch.Tensor, target: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    return torch.sum(torch.where(valid, (out - target) ** 2, torch.zeros_like(out))) / valid.sum().clamp(min=1)


def loss_fn(model: Nowcaster, batch, teacher: float) -> torch.Tensor:
    cond, x1, valid, sl_low = unit_batch(batch, model.frames_in)
    if model.param == "deterministic":
        return masked_mse(model(x1, torch.zeros(len(x1), device=x1.device), cond), x1, valid)
    x0 = torch.randn_like(x1)
    t = torch.rand(len(x1), device=x1.device)
    x_t = (1 - t).view(-1, 1, 1, 1) * x0 + t.view(-1, 1, 1, 1) * x1
    out = model(x_t, t, cond)
    if model.param == "velocity":
        return masked_mse(out, x1 - x0, valid)
    loss = masked_mse(out, x1, valid)
    if teacher > 0:
        gap = (F.avg_pool2d(out, TEACHER_POOL) - sl_low) ** 2
        loss = loss + teacher * torch.mean(teacher_weights(x1.shape[1]).to(gap.device) * gap)
    return loss


def fit(model, arrays, settings, seed, teacher, checkpoint, loss=loss_fn, device=None):
    return fit_arrays(
        model,
        arrays,
        lambda m, b: loss(m, b, teacher),
        train_cfg=settings["train"],
        seed=seed,
        checkpoint=checkpoint,
        fingerprint=fingerprint_of(settings, [__file__]),
        desc=f"pdrf {model.param}",
        device=device,
        grad_clip=1.0,
        lr_schedule=settings["train"].get("schedule", "constant"),
    )


@torch.no_grad()
def forecast(model: Nowcaster, cond: np.ndarray, frames_out: int, nfe: int, seed: int) -> np.ndarray:
    c = torch.from_numpy(cond)
    if model.param == "deterministic":
        return model(c, torch.zeros(len(c)), c).numpy()
    x0 = torch.randn(len(c), frames_out, *c.shape[-2:], generator=torch.Generator().manual_seed(seed))
    return euler(lambda x, t: model.velocity(x, t, c), x0, nfe).numpy()


@torch.no_grad()
def last_step_identity(model: Nowcaster, cond: np.ndarray, frames_out: int, nfe: int, seed: int) -> float:
    """max |final sample - network output at the last step| of data-space sampling."""
    c = torch.from_numpy(cond)
    x = torch.randn(len(c), frames_out, *c.shape[-2:], generator=torch.Generator().manual_seed(seed))
    dt = 1.0 / nfe
    for k in range(nfe):
        t = torch.full((len(c),), k * dt)
        if k == nfe - 1:
            network = model(x, t, c)
        x = x + dt * model.velocity(x, t, c)
    return float((x - network).abs().max())


def restoring_check(shape: tuple[int, ...], nfe: int, seed: int) -> dict[str, float]:
    """Oracle samplers: a perturbation injected at t = 0.5 vanishes under data-space sampling (oracle
    x1_hat = x1) and persists under velocity sampling (oracle v = x1 - x0). Ratios |x(1) - x1| / |delta|."""
    gen = torch.Generator().manual_seed(seed)
    x1, x0, delta = (torch.randn(*shape, generator=gen, dtype=torch.float64) for _ in range(3))
    delta = 0.1 * delta

    def data_space(x, t):
        return (x1 - x) / torch.clamp(1 - t, min=EPS).view(-1, 1, 1, 1)

    def oracle_velocity(x, t):
        return x1 - x0

    out = {}
    for name, field in (("data_space", data_space), ("velocity", oracle_velocity)):
        final = euler(field, x0, nfe, inject=(0.5, delta))
        out[f"{name}_residual_ratio"] = float(torch.linalg.norm(final - x1) / torch.linalg.norm(delta))
    return out


def forecast_store(path, ds, test: np.ndarray, keys: list[str], settings: dict, frames_out: int) -> FieldsWriter:
    n = ds.precip.shape[-1]
    variables = {k: (("sample", "lead", "y", "x"), (len(test), frames_out, n, n)) for k in keys}
    return FieldsWriter(path, variables, {k: ds.attrs[k] for k in ("dx", "dt", "periodic", "source", "frames_in")})


def main(job) -> None:
    settings, seed0 = job.params.settings, int(job.params.seed)
    device = pick_device(job.params.device)
    ds = open_fields(job.input.radar, ("precip",), load=False, missing_ok=("precip",))
    frames_in = int(ds.attrs["frames_in"])
    split = split_labels(ds)
    train_rows, test_rows = np.flatnonzero(split == "train"), np.flatnonzero(split == "test")
    cache = settings["train"]["cache_mb"]
    arrays = (Samples(ds, "precip", train_rows, cache_mb=cache), Samples(ds, "sl_lowpass", train_rows, cache_mb=cache))
    test_past = Samples(ds, "precip", test_rows, cache_mb=cache)
    frames_out = ds.precip.shape[1] - frames_in
    cfg, sampling = settings["model"], settings["sampling"]
    chunk = settings["chunk"]
    ckpt_dir = Path(job.output.training).parent / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    report = {"history": {}, "parameters": {}, "checks": {}}
    runs = [
        (name, variant, s)
        for name, variant in settings["variants"].items()
        for s in (settings["seeds"] if variant.get("seeded", True) else settings["seeds"][:1])
    ]
    keys = [f"{name}_s{s}" for name, _, s in runs]
    sweep = [(name, s) for name, _, s in runs if name == settings["sweep_variant"]][:1]
    keys += [f"{name}_s{s}_nfe{nfe}" for name, s in sweep for nfe in sampling["nfe_sweep"]]
    with forecast_store(job.output.forecasts, ds, test_rows, keys, settings, frames_out) as store:
        for name, variant, s in runs:
            seed = seed0 + s
            torch.manual_seed(seed)
            model = Nowcaster(variant["param"], frames_in, frames_out, cfg["width"], cfg["levels"])
            ckpt = ckpt_dir / f"{name}_{s}.pt"
            result = fit(model, arrays, settings, seed, variant.get("teacher", 0.0), ckpt, device=device)
            ckpt.unlink(missing_ok=True)
            report["history"][f"{name}/s{s}"] = result.history
            report["parameters"][name] = count_parameters(model)
            nfes = [sampling["nfe"]] + (sampling["nfe_sweep"] if (name, s) in sweep else [])
            for start in range(0, len(test_rows), chunk):
                positions = np.arange(start, min(start + chunk, len(test_rows)))
                cond = np.nan_to_num(test_past.take(positions)[:, :frames_in], nan=0.0) / 127.5 - 1.0
                cond = cond.astype(np.float32)
                for i, nfe in enumerate(nfes):
                    key = f"{name}_s{s}" if i == 0 else f"{name}_s{s}_nfe{nfe}"
                    store.write(key, start, to_vil(forecast(model, cond, frames_out, nfe, seed + start)))
                if (name, s) in sweep and start == 0:
                    report["checks"]["last_step_max_abs_diff"] = last_step_identity(
                        model, cond, frames_out, sampling["nfe"], seed
                    )
        store.finish(split[test_rows], coords={"row": test_rows})
    report["checks"] |= restoring_check((4, frames_out, 8, 8), sampling["nfe"], seed0)
    write_json(job.output.training, report)
