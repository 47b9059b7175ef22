"""Stage: distortion, the perceptual proxy, rates and decoding speed of every decoder, JPEG at matched quality;
metrics.json and claims.json.

Per seed, test image and decoder: PSNR, MS-SSIM (repro.metrics.images), MSE and the sliced Wasserstein
distance between the 4x4 patch distributions of the reconstruction and the original (the offline perceptual
proxy; no pretrained network), each image at its own size. ``items`` lists every quantity per (seed, image)
in one fixed order, so that claims pair them. The trivial predictor of the codec's learning check is the
training crops' mean colour. Rates are the index bits the codec wrote (fixed length; the 32-bit size header
apart). JPEG (Pillow, optimised tables, scan bits; qualities x downscaling factors: the image resized before
coding and back after, as one stretches JPEG to low rates) is coded per image, and the rate JPEG needs for the
one-step decoder's MS-SSIM on that image is read off its rate-quality front over all those settings
(repro.papers.cod_lite.jpeg.rate_at_quality).
"""

from __future__ import annotations

import numpy as np

from repro.metrics.images import ms_ssim, psnr, sliced_wasserstein
from repro.papers.cod_lite.claims import CLAIMS
from repro.papers.cod_lite.coding import HEADER_BITS
from repro.papers.cod_lite.jpeg import jpeg_roundtrip, rate_at_quality
from repro.papers.cod_lite.test_images import load_test
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.fields_io import load_arrays
from repro.workflow.io import InputError, read_json, write_json


def quality(recon: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """PSNR, MS-SSIM, MSE (on 0..255) and patch SWD of one reconstruction (H, W, 3) against the original."""
    a, b = recon[None], truth[None]
    return {
        "psnr": float(psnr(a, b)[0]),
        "ms_ssim": float(ms_ssim(a, b)[0]),
        "mse": float(np.mean((a.astype(np.float64) - b) ** 2)),
        "swd": sliced_wasserstein(a, b),
    }


def decoders(settings: dict) -> list[str]:
    n = settings["sampler_steps"]
    return [
        "mse",
        "onestep",
        *(f"teacher_{k}" for k in sorted({1, n, *settings["teacher_steps"]})),
        f"gen_teacher_{n}",
        "untrained_onestep",
        f"untrained_teacher_{n}",
    ]


def jpeg_curve(img: np.ndarray, cfg: dict) -> list[dict]:
    pixels = img.shape[0] * img.shape[1]
    rows = []
    for f in cfg["downscales"]:
        for q in cfg["qualities"]:
            decoded, file_bits, scan_bits = jpeg_roundtrip(img, q, f)
            rows.append(
                {"quality": int(q), "downscale": int(f), "bpp_file": file_bits / pixels, "bpp_scan": scan_bits / pixels}
                | quality(decoded, img)
            )
    return rows


def main(job) -> None:
    settings = job.params.settings
    tests = load_test(job.input.test)
    names = decoders(settings)
    cfg_model = settings["model"]
    per_seed: dict[str, dict] = {}
    timing: dict[str, list[float]] = {}
    training = {}
    for path_recon, path_training in zip(job.input.recon, job.input.training):
        recon, report = load_arrays(path_recon), read_json(path_training)
        s = int(report["seed"])
        training[s] = report
        rows = {}
        for name, img in tests.items():
            missing = [
                k for k in [*names, "bits", "payload_bits", "tokens", "mismatches"] if f"{name}/{k}" not in recon
            ]
            if missing:
                raise InputError(path_recon, f"image {name} lacks {missing}")
            pixels = img.shape[0] * img.shape[1]
            rows[name] = {
                "bpp": float(recon[f"{name}/payload_bits"]) / pixels,
                "payload_bits": int(recon[f"{name}/payload_bits"]),
                "written_bits": int(recon[f"{name}/bits"]),
                "tokens": int(recon[f"{name}/tokens"]),
                "mismatches": int(recon[f"{name}/mismatches"]),
                "divisible": bool(img.shape[0] % cfg_model["ds"] == 0 and img.shape[1] % cfg_model["ds"] == 0),
                "decoders": {d: quality(recon[f"{name}/{d}"], img) for d in names},
                "mean_colour_mse": float(np.mean((img.astype(np.float64) - recon["mean_colour"]) ** 2)),
                "denoise": {k: float(recon[f"{name}/denoise/{k}"]) for k in ("teacher", "gen_teacher", "untrained")},
            }
        per_seed[f"s{s}"] = {"images": rows}
        for key, values in report["timing"].items():
            timing.setdefault(key, []).extend(values)
    seeds = [f"s{s}" for s in settings["seeds"]]
    if sorted(seeds) != sorted(per_seed):
        raise InputError(job.input.recon[0], f"expected seeds {seeds}, got {sorted(per_seed)}")
    item_rows = [per_seed[s]["images"][name] for s in seeds for name in tests]
    items = {d: {m: [r["decoders"][d][m] for r in item_rows] for m in ("psnr", "ms_ssim", "mse", "swd")} for d in names}
    items["mean_colour"] = {"mse": [r["mean_colour_mse"] for r in item_rows]}
    for k in ("teacher", "gen_teacher", "untrained"):
        items.setdefault(f"{k}_denoiser", {})["denoise"] = [r["denoise"][k] for r in item_rows]
    jpeg = {name: jpeg_curve(img, settings["jpeg"]) for name, img in tests.items()}
    at_quality = []
    for s in seeds:
        for name in tests:
            row = per_seed[s]["images"][name]
            curve = jpeg[name]
            jpeg_bpp = rate_at_quality(
                row["decoders"]["onestep"]["ms_ssim"],
                np.array([r["bpp_scan"] for r in curve]),
                np.array([r["ms_ssim"] for r in curve]),
            )
            at_quality.append({"image": name, "seed": s, "ours_bpp": row["bpp"], "jpeg_bpp": jpeg_bpp})
    first = training[settings["seeds"][0]]
    n = settings["sampler_steps"]
    metrics = {
        "seeds": per_seed,
        "items": items,
        "decoders": names,
        "sampler_steps": n,
        "bits": cfg_model["bits"],
        "ds": cfg_model["ds"],
        "nominal_bpp": cfg_model["bits"] / cfg_model["ds"] ** 2,
        "bpp": float(np.mean([r["bpp"] for r in item_rows])),
        "header_bits": HEADER_BITS,
        "fixed_length_error_bits": int(
            np.max([abs(r["payload_bits"] - cfg_model["bits"] * r["tokens"]) for r in item_rows])
        ),
        "padding_bits_max": int(np.max([r["written_bits"] - r["payload_bits"] for r in item_rows])),
        "divisible_bpp_error": float(
            np.max(
                [abs(r["bpp"] - cfg_model["bits"] / cfg_model["ds"] ** 2) for r in item_rows if r["divisible"]] or [0.0]
            )
        ),
        "mismatches": int(np.sum([r["mismatches"] for r in item_rows])),
        "jpeg": jpeg,
        "jpeg_at_onestep_ms_ssim": at_quality,
        "timing_s": timing,
        "timing_size": first["timing_size"],
        "parameters": first["parameters"],
        "image_sizes": {name: list(img.shape[:2]) for name, img in tests.items()},
    }
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "cod-lite", claims)
