"""Training-step throughput of the torch papers at their full-scale model sizes on a CUDA device.

For each probe: the paper's own model class built with the ``model`` keys of config/full.yaml, a synthetic
batch of the paper's full-scale shapes, ``--steps`` AdamW steps (after ``--warmup``) in bf16 autocast
(weights float32), timed with CUDA events. Reports samples/s, peak allocated memory, and model FLOP
utilisation: FLOPs of one step counted by ``torch.utils.flop_counter`` (forward and backward, matmuls
and convolutions) times steps/s, over the device's dense bf16 peak (table below; unknown devices print
the achieved TFLOP/s only). ``--compile`` also measures ``torch.compile`` of the same step.

Without CUDA it says so and exits 0 (nothing to measure on a CPU-only machine).

    python benchmarks/gpu.py [--steps 300] [--warmup 20] [--papers mosaic nmrshift] [--compile]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

# Dense bf16 tensor-core peaks (no sparsity), TFLOP/s, from the vendors' data sheets.
PEAK_BF16_TFLOPS = {
    "H200": 989.0,
    "H100 SXM": 989.0,
    "H100 80GB HBM3": 989.0,
    "H100 PCIe": 756.0,
    "H100 NVL": 835.0,
    "A100": 312.0,
    "L40S": 362.0,
    "L4": 121.0,
    "A10": 125.0,
}


@dataclass
class Probe:
    """One paper's training step: ``build(section, device)`` returns (model, batch(size), loss(model, batch))."""

    slug: str
    batch_size: int
    build: Callable


def full_config() -> dict:
    return yaml.safe_load((REPO / "config" / "full.yaml").read_text())


def build_mosaic(section: dict, device):
    """Mosaic at 1.5 deg (121 x 240, 4 surface + 6 x 13 level channels), two ensemble members, fair CRPS."""
    import numpy as np
    import torch

    from repro.papers.mosaic.model import ModelSettings, Mosaic
    from repro.papers.mosaic.train import fair_crps_loss

    era5 = full_config()["data"]["era5"]
    levels = len(era5.get("levels", [])) or 1
    level_vars = {"geopotential", "temperature", "u_component_of_wind", "v_component_of_wind"}
    level_vars |= {"specific_humidity", "vertical_velocity"}
    channels = sum(levels if v in level_vars else 1 for v in era5["variables"])
    spec = dict(section["model"])
    spec["tile"] = tuple(spec.get("tile", (2, 8)))
    model_settings = ModelSettings(channels=channels, **spec)
    lat, lon = np.linspace(-90, 90, 121), np.arange(240) * 1.5
    model = Mosaic(model_settings, lat, lon).to(device)
    members = section["train"].get("members", 2)
    weights = torch.cos(torch.deg2rad(torch.as_tensor(lat, dtype=torch.float32, device=device)))[:, None]

    def batch(size: int):
        history = torch.randn(size, model_settings.history, channels, 121, 240, device=device)
        return history, torch.randn(size, channels, 121, 240, device=device)

    def loss(net, b):
        history, truth = b
        noise = [torch.randn(history.shape[0], model_settings.noise_dim, device=device) for _ in range(members)]
        return fair_crps_loss(torch.stack([net(history, z) for z in noise]), truth, weights)

    return model, batch, loss


def build_nmrshift(section: dict, device):
    """NMRShift's ShiftTransformer at paper width/depth on molecules of 64 atoms (NMRShiftDB2's largest)."""
    import torch

    from repro.papers.nmrshift.model import build_model

    model = build_model(section["model"], "cls").to(device)
    atoms = 64

    def batch(size: int):
        numbers = torch.randint(1, 9, (size, atoms), device=device)
        numbers[:, atoms // 2 :] = torch.where(torch.rand(size, atoms // 2, device=device) < 0.3, 0, 6)
        return (
            numbers,
            torch.randn(size, atoms, 3, device=device) * 3,
            torch.zeros(size, dtype=torch.long, device=device),
        )

    def loss(net, b):
        numbers, coords, solvent = b
        pred = net(numbers, coords, solvent)
        return ((pred - 1.0) ** 2 * (numbers > 0)).mean()

    return model, batch, loss


PROBES = {
    "mosaic": Probe("mosaic", 4, build_mosaic),
    "nmrshift": Probe("nmrshift", 64, build_nmrshift),
}
# Torch papers without a probe yet (their full-scale step is not assembled here): listed so the report says so.
UNPROBED = ("biodynaspec", "hysomi", "poisson-eat", "pai-graphon")


def peak_tflops(name: str) -> float | None:
    return next((v for k, v in PEAK_BF16_TFLOPS.items() if k.lower() in name.lower()), None)


def step_flops(model, batch, loss) -> float:
    """FLOPs of one forward + backward, counted by torch's FlopCounterMode."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter, torch.autocast("cuda", dtype=torch.bfloat16):
        loss(model, batch).backward()
    model.zero_grad(set_to_none=True)
    return float(counter.get_total_flops())


def measure(probe: Probe, section: dict, steps: int, warmup: int, compile_step: bool) -> dict:
    import torch

    device = torch.device("cuda")
    torch.cuda.reset_peak_memory_stats()
    model, make_batch, loss = probe.build(section, device)
    batch = make_batch(probe.batch_size)
    flops = step_flops(model, batch, loss)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    run = torch.compile(loss) if compile_step else loss

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            value = run(model, batch)
        value.backward()
        optimizer.step()

    for _ in range(warmup):
        step()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(steps):
        step()
    end.record()
    torch.cuda.synchronize()
    seconds = start.elapsed_time(end) / 1e3
    return {
        "params_m": sum(p.numel() for p in model.parameters()) / 1e6,
        "samples_s": steps * probe.batch_size / seconds,
        "step_ms": seconds / steps * 1e3,
        "peak_gb": torch.cuda.max_memory_allocated() / 1e9,
        "tflops": flops * steps / seconds / 1e12,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--papers", nargs="+", default=list(PROBES), choices=list(PROBES))
    parser.add_argument("--compile", action="store_true", help="also time torch.compile of the step")
    args = parser.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print(f"no CUDA device (torch {torch.__version__}): nothing to measure; run this where a GPU is lent")
        return 0
    name = torch.cuda.get_device_name()
    peak = peak_tflops(name)
    print(f"{name}, torch {torch.__version__}, CUDA {torch.version.cuda}, bf16 peak {peak or 'unknown'} TFLOP/s")
    config = full_config()["papers"]
    for slug in args.papers:
        for compiled in (False, True) if args.compile else (False,):
            r = measure(PROBES[slug], config[slug], args.steps, args.warmup, compiled)
            mfu = f"{100 * r['tflops'] / peak:.1f} %" if peak else "n/a"
            print(
                f"{slug:>10}{' compiled' if compiled else ''}: {r['params_m']:.1f} M params, batch "
                f"{PROBES[slug].batch_size}, {r['samples_s']:,.1f} samples/s ({r['step_ms']:.1f} ms/step), "
                f"peak {r['peak_gb']:.1f} GB, {r['tflops']:.1f} TFLOP/s, MFU {mfu}"
            )
            torch.cuda.empty_cache()
    print(f"not probed yet: {', '.join(UNPROBED)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
