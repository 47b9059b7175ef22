"""Stage: train the rectified-flow variants and the deterministic U-Net, then forecast the test sequences.

Conditional rectified flow over the future sequence x1 (frames as channels) given the past frames c:
x_t = (1 - t) x0 + t x1, x0 ~ N(0, I), t ~ U(0, 1), on data scaled to [-1, 1].
- ``data`` parameterisation (PDRF): the network predicts x1_hat = D(x_t, t, c), loss |x1_hat - x1|^2; the
  velocity is induced, v = (x1_hat - x_t) / max(1 - t, eps), so an Euler step that reaches t = 1 lands on
  x1_hat exactly and -x_t / (1 - t) pulls deviations back (the restoring effect);
- ``velocity`` parameterisation: the network predicts v = V(x_t, t, c), loss |v - (x1 - x0)|^2;
- the soft semi-Lagrangian teacher (``teacher`` > 0): + teacher * sum_k w_k |LP(x1_hat_k) - LP(x_SL,k)|^2,
  LP a 4x4 average pool, x_SL the last past frame backtracked along Lucas-Kanade motion, w_k falling
  linearly with the lead k (transport is trusted less the further ahead);
- ``deterministic``: the same backbone maps c to x1 with MSE.
All variants share one backbone (repro.learning.operators.UNet with x_t, c and t as input channels).

Outputs: predictions.npz (``<variant>/s<seed>`` test forecasts (sample, lead, y, x) on the 0-255 scale,
``pdrf/s<seed>/nfe<n>`` for the NFE sweep), training.json (histories, parameter counts, exact checks).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from repro.data.fields.store import open_fields, split_of
from repro.learning.fields_training import fit_arrays
from repro.learning.operators import UNet, count_parameters
from repro.learning.training import fingerprint_of
from repro.papers.pdrf.nowcast import sl_forecasts
from repro.workflow.device import pick_device
from repro.workflow.fields_io import save_arrays
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
        self.param = param
        cin = frames_in if param == "deterministic" else frames_out + frames_in + 1
        self.net = UNet(cin, frames_out, width=width, levels=levels, periodic=False)

    def forward(self, x_t: torch.Tensor, t: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        if self.param == "deterministic":
            return self.net(cond)
        time = t.view(-1, 1, 1, 1).expand(-1, 1, *x_t.shape[-2:])
        return self.net(torch.cat([x_t, cond, time], dim=1))

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


def loss_fn(model: Nowcaster, batch, teacher: float) -> torch.Tensor:
    cond, x1, x_sl = batch
    if model.param == "deterministic":
        return torch.mean((model(x1, torch.zeros(len(x1), device=x1.device), cond) - x1) ** 2)
    x0 = torch.randn_like(x1)
    t = torch.rand(len(x1), device=x1.device)
    x_t = (1 - t).view(-1, 1, 1, 1) * x0 + t.view(-1, 1, 1, 1) * x1
    out = model(x_t, t, cond)
    if model.param == "velocity":
        return torch.mean((out - (x1 - x0)) ** 2)
    loss = torch.mean((out - x1) ** 2)
    if teacher > 0:
        gap = (F.avg_pool2d(out, 4) - F.avg_pool2d(x_sl, 4)) ** 2
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


def sequences(ds, split: str, frames_in: int) -> tuple[np.ndarray, np.ndarray]:
    part = split_of(ds, split).precip.values
    return part[:, :frames_in], part[:, frames_in:]


def main(job) -> None:
    settings, seed0 = job.params.settings, int(job.params.seed)
    device = pick_device(job.params.device)
    ds = open_fields(job.input.radar, ("precip",))
    frames_in = int(ds.attrs["frames_in"])
    past, future = sequences(ds, "train", frames_in)
    test_past, _ = sequences(ds, "test", frames_in)
    frames_out = future.shape[1]
    motion = settings["motion"]
    x_sl = sl_forecasts(past, frames_out, motion["window"], motion["ridge"])
    arrays = (to_unit(past), to_unit(future), to_unit(x_sl))
    cfg, sampling = settings["model"], settings["sampling"]
    ckpt_dir = Path(job.output.training).parent / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    preds, report = {}, {"history": {}, "parameters": {}, "checks": {}}
    for name, variant in settings["variants"].items():
        seeds = settings["seeds"] if variant.get("seeded", True) else settings["seeds"][:1]
        for s in seeds:
            seed = seed0 + s
            torch.manual_seed(seed)
            model = Nowcaster(variant["param"], frames_in, frames_out, cfg["width"], cfg["levels"])
            ckpt = ckpt_dir / f"{name}_{s}.pt"
            result = fit(model, arrays, settings, seed, variant.get("teacher", 0.0), ckpt, device=device)
            ckpt.unlink(missing_ok=True)
            report["history"][f"{name}/s{s}"] = result.history
            report["parameters"][name] = count_parameters(model)
            cond = to_unit(test_past)
            preds[f"{name}/s{s}"] = to_vil(forecast(model, cond, frames_out, sampling["nfe"], seed))
            if name == settings["sweep_variant"] and s == seeds[0]:
                for nfe in sampling["nfe_sweep"]:
                    preds[f"{name}/s{s}/nfe{nfe}"] = to_vil(forecast(model, cond, frames_out, nfe, seed))
                report["checks"]["last_step_max_abs_diff"] = last_step_identity(
                    model, cond, frames_out, sampling["nfe"], seed
                )
    report["checks"] |= restoring_check((4, frames_out, 8, 8), sampling["nfe"], seed0)
    save_arrays(job.output.predictions, preds)
    write_json(job.output.training, report)
