"""Stage: distortion, the perceptual proxy, rates and speed of every decoder and of JPEG; claims.

Per seed and decoder: PSNR and MS-SSIM (repro.metrics.images) averaged over the test images, and the sliced
Wasserstein distance between 4x4 patch distributions of reconstructions and originals (the offline
perceptual proxy; no pretrained network). Rates are the bits the range coder wrote. JPEG is evaluated over
the configured qualities and interpolated at the learned codec's rate (scan payload bits).
"""

from __future__ import annotations

import numpy as np

from repro.metrics.images import ms_ssim, psnr, sliced_wasserstein
from repro.papers.cod_lite.claims import CLAIMS
from repro.papers.cod_lite.coding import HEADER_BITS
from repro.papers.cod_lite.jpeg import interpolate_at, jpeg_roundtrip
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.fields_io import load_arrays
from repro.workflow.io import InputError, read_json, write_json


def quality(recon: np.ndarray, test: np.ndarray) -> dict[str, float]:
    return {
        "psnr": float(np.mean(psnr(recon, test))),
        "ms_ssim": float(np.mean(ms_ssim(recon, test))),
        "swd": sliced_wasserstein(recon, test),
    }


def decoders(settings: dict) -> list[str]:
    n = settings["sampler_steps"]
    return ["mse", "onestep", *(f"teacher_{k}" for k in settings["teacher_steps"]), f"gen_teacher_{n}"]


def jpeg_curve(test: np.ndarray, qualities: list[int]) -> list[dict]:
    pixels = test.shape[1] * test.shape[2]
    rows = []
    for q in qualities:
        out = [jpeg_roundtrip(img, q) for img in test]
        decoded = np.stack([o[0] for o in out])
        rows.append(
            {
                "quality": int(q),
                "bpp_file": float(np.mean([o[1] for o in out]) / pixels),
                "bpp_scan": float(np.mean([o[2] for o in out]) / pixels),
            }
            | quality(decoded, test)
        )
    return rows


def main(job) -> None:
    settings = job.params.settings
    images, recon = load_arrays(job.input.images), load_arrays(job.input.recon)
    training = read_json(job.input.training)
    test = images["test"]
    pixels = test.shape[1] * test.shape[2]
    names = decoders(settings)
    per_seed: dict[str, dict] = {}
    for s in settings["seeds"]:
        key = f"s{s}"
        missing = [n for n in [*names, "bits", "ideal_bits", "mismatches"] if f"{key}/{n}" not in recon]
        if missing:
            raise InputError(job.input.recon, f"seed {s} lacks {missing}")
        bits, ideal = recon[f"{key}/bits"], recon[f"{key}/ideal_bits"]
        per_seed[key] = {
            "bpp": float(np.mean(bits) / pixels),
            "bpp_header": HEADER_BITS / pixels,
            "bpp_ideal": float(np.mean(ideal) / pixels),
            "coder_overhead_bits_max": float(np.max(bits - ideal)),
            "coder_overhead_bits_min": float(np.min(bits - ideal)),
            "mismatches": int(np.sum(recon[f"{key}/mismatches"])),
            "images": int(len(bits)),
            "decoders": {n: quality(recon[f"{key}/{n}"], test) for n in names},
        }
    curve = jpeg_curve(test, settings["jpeg_qualities"])
    mean_bpp = float(np.mean([v["bpp"] for v in per_seed.values()]))
    jpeg_rates = np.array([r["bpp_scan"] for r in curve])
    timing = training["timing"]
    n = settings["sampler_steps"]
    megapixels = timing["pixels_per_image"] / 1e6
    metrics = {
        "seeds": per_seed,
        "decoders": names,
        "sampler_steps": n,
        "bpp": mean_bpp,
        "jpeg": curve,
        "jpeg_at_codec_bpp": {
            m: interpolate_at(mean_bpp, jpeg_rates, np.array([r[m] for r in curve])) for m in ("psnr", "ms_ssim", "swd")
        }
        | {"min_bpp_scan": float(np.min(jpeg_rates)), "min_bpp_file": float(np.min([r["bpp_file"] for r in curve]))},
        "timing_ms_per_image": {k: 1e3 * v for k, v in timing.items() if k != "pixels_per_image"},
        "throughput_megapixels_per_s": {
            "encode": megapixels / timing["encode"],
            "decode_mse": megapixels / (timing["entropy_decode"] + timing["synth_mse"]),
            "decode_onestep": megapixels / (timing["entropy_decode"] + timing["synth_onestep"]),
            f"decode_teacher_{n}": megapixels / (timing["entropy_decode"] + timing[f"synth_teacher_{n}"]),
        },
        "parameters": training["parameters"],
        "image_size": list(test.shape[1:3]),
    }
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "cod-lite", claims)
