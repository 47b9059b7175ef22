"""Training-step throughput of the torch papers at their full-scale model sizes on a CUDA device.

For each probe: the paper's own model class built with the ``model`` keys of config/full.yaml, a synthetic
batch of the paper's full-scale shapes, ``--steps`` AdamW steps (after ``--warmup``) in bf16 autocast
(weights float32), timed with CUDA events. Reports samples/s, peak allocated memory, and model FLOP
utilisation: FLOPs of one step counted by ``torch.utils.flop_counter`` (forward and backward, matmuls
and convolutions) times steps/s, over the device's dense bf16 peak (table below; unknown devices print
the achieved TFLOP/s only). ``--compile`` also measures ``torch.compile`` of the same step.

Without CUDA it says so and exits 0 (nothing to measure on a CPU-only machine).

Each torch paper's step lives in its package as ``repro.papers.<pkg>.gpu_probe`` (``BATCH_SIZE`` and
``build(section, device)``), next to the model it builds, so a paper's probe changes with its code.

    python benchmarks/gpu.py [--steps 300] [--warmup 20] [--papers mosaic nmrshift] [--compile]
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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
    """The paper-scale config: the default with config/full.yaml merged over it, as a run sees it."""
    from repro.workflow.config import load_config

    return load_config("config/full.yaml")


def gpu_papers(config: dict) -> list[str]:
    """Enabled papers whose config puts a stage on a GPU (``resources.<stage>.gpu``): the ones to probe."""
    from repro.workflow.config import enabled_papers

    def on_gpu(slug: str) -> bool:
        stages = config["papers"][slug].get("resources", {}).values()
        return any(isinstance(r, dict) and r.get("gpu", 0) > 0 for r in stages)

    return [s for s in enabled_papers(config) if on_gpu(s)]


def discover_probes(slugs: list[str]) -> tuple[dict[str, Probe], list[str]]:
    """Probes from each paper's ``repro.papers.<pkg>.gpu_probe`` module; the slugs without one, listed apart."""
    probes, missing = {}, []
    for slug in slugs:
        try:
            module = importlib.import_module(f"repro.papers.{slug.replace('-', '_')}.gpu_probe")
        except ModuleNotFoundError as err:
            if not str(err.name).endswith("gpu_probe"):
                raise
            missing.append(slug)
            continue
        probes[slug] = Probe(slug, module.BATCH_SIZE, module.build)
    return probes, missing


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
    parser.add_argument(
        "--papers", nargs="+", help="slugs to probe (default: every paper whose full-scale config uses a GPU)"
    )
    parser.add_argument("--compile", action="store_true", help="also time torch.compile of the step")
    args = parser.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print(f"no CUDA device (torch {torch.__version__}): nothing to measure; run this where a GPU is lent")
        return 0
    name = torch.cuda.get_device_name()
    peak = peak_tflops(name)
    print(f"{name}, torch {torch.__version__}, CUDA {torch.version.cuda}, bf16 peak {peak or 'unknown'} TFLOP/s")
    config = full_config()
    probes, unprobed = discover_probes(args.papers or gpu_papers(config))
    config = config["papers"]
    for slug in probes:
        for compiled in (False, True) if args.compile else (False,):
            r = measure(probes[slug], config[slug], args.steps, args.warmup, compiled)
            mfu = f"{100 * r['tflops'] / peak:.1f} %" if peak else "n/a"
            print(
                f"{slug:>10}{' compiled' if compiled else ''}: {r['params_m']:.1f} M params, batch "
                f"{probes[slug].batch_size}, {r['samples_s']:,.1f} samples/s ({r['step_ms']:.1f} ms/step), "
                f"peak {r['peak_gb']:.1f} GB, {r['tflops']:.1f} TFLOP/s, MFU {mfu}"
            )
            torch.cuda.empty_cache()
    if unprobed:
        print(f"no gpu_probe module yet: {', '.join(unprobed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
