"""CoD-Lite's claims as functions of the evaluate stage's metrics (see repro.reporting.claims).

Quality comparisons pair the same (seed, test image) items and carry a paired percentile bootstrap interval;
timings carry a paired bootstrap interval over the interleaved repeats. A claim passes only when the whole
interval clears its test.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Measured, Test, bootstrap_interval, learning_check, skill_over_trivial

REALTIME_FPS = 25.0  # "real time": at least 25 decoded frames per second (PAL video rate)


def _items(m: Mapping[str, Any], decoder: str, metric: str) -> np.ndarray:
    return np.asarray(m["items"][decoder][metric], dtype=float)


def _n(m: Mapping[str, Any]) -> int:
    return int(m["sampler_steps"])


def _learned(model: str, trivial: str):
    """Skill in per-image MSE of decoder ``model`` over ``trivial`` (names may use {n} for sampler_steps)."""
    return lambda m: skill_over_trivial(
        _items(m, model.format(n=_n(m)), "mse"), _items(m, trivial.format(n=_n(m)), "mse")
    )


def _gap(worse: str, better: str, metric: str, higher_better: bool):
    """Paired mean difference favouring ``better`` (positive when ``better`` wins) over (seed, image) items."""

    def measure(m: Mapping[str, Any]) -> Measured:
        a, b = _items(m, worse.format(n=_n(m)), metric), _items(m, better.format(n=_n(m)), metric)
        sign = 1.0 if higher_better else -1.0
        return bootstrap_interval((b, a), lambda x, y: sign * float(np.mean(x - y)), paired=True)

    return measure


def _speedup_over_n(m: Mapping[str, Any]) -> Measured:
    """Median decode time of the N-step teacher over the one-step student's, divided by N (1: exactly N times
    faster), paired over the interleaved repeats."""
    n = _n(m)
    slow = np.asarray(m["timing_s"][f"decode_teacher_{n}"], dtype=float)
    fast = np.asarray(m["timing_s"]["decode_onestep"], dtype=float)
    out = bootstrap_interval((slow, fast), lambda a, b: float(np.median(a) / np.median(b) / n), paired=True)
    out.details = {"speedup": float(np.median(slow) / np.median(fast)), "N": n}
    return out


def _fps(m: Mapping[str, Any]) -> Measured:
    times = np.asarray(m["timing_s"]["decode_onestep"], dtype=float)
    out = bootstrap_interval(times, lambda t: float(1.0 / np.median(t)))
    out.details = {"size": m["timing_size"]}
    return out


def _savings(m: Mapping[str, Any]) -> Measured:
    """Mean over (seed, image) of 1 - ours / JPEG's bits per pixel at the one-step decoder's MS-SSIM."""
    rows = m["jpeg_at_onestep_ms_ssim"]
    ours = np.array([r["ours_bpp"] for r in rows], dtype=float)
    jpeg = np.array([r["jpeg_bpp"] if r["jpeg_bpp"] is not None else np.nan for r in rows], dtype=float)
    out = bootstrap_interval(1.0 - ours / jpeg)
    out.details = {"ours_bpp": float(np.mean(ours)), "jpeg_bpp": float(np.mean(jpeg)), "items": int(len(rows))}
    return out


LEARNED = {
    "codec": (
        "cod_lite_learned_codec",
        "the condition codec's MSE decoder",
        "mse",
        "mean_colour",
        "the training mean colour",
    ),
    "teacher": (
        "cod_lite_learned_teacher",
        "the compression-oriented N-step teacher",
        "teacher_{n}",
        "untrained_teacher_{n}",
        "its untrained initialisation (N steps)",
    ),
    "gen_teacher": (
        "cod_lite_learned_gen_teacher",
        "the generation-oriented N-step teacher",
        "gen_teacher_{n}",
        "untrained_teacher_{n}",
        "its untrained initialisation (N steps)",
    ),
    "student": (
        "cod_lite_learned_student",
        "the DMD one-step student",
        "onestep",
        "untrained_onestep",
        "an untrained student (one step)",
    ),
}

CLAIMS = [
    *(
        learning_check(cid, what, trivial_name, _learned(model, trivial), error="per-image MSE on the test images")
        for cid, what, model, trivial, trivial_name in LEARNED.values()
    ),
    ClaimSpec(
        "cod_lite_fixed_length_rate",
        "check",
        "The indices are written at fixed length: every image's payload is exactly bits x tokens bits (largest "
        "difference over images and seeds = 0), so bpp = bits / ds^2 on images whose sides are multiples of ds",
        Test("<=", 0.0),
        lambda m: float(m["fixed_length_error_bits"] + m["divisible_bpp_error"]),
        reported="exact_rate",
    ),
    ClaimSpec(
        "cod_lite_bitstream_lossless",
        "check",
        "Reading each written bitstream returns the encoder's indices and the image size exactly (values "
        "changed, all seeds and test images, = 0)",
        Test("<=", 0.0),
        lambda m: float(m["mismatches"]),
        reported="exact_rate",
    ),
    ClaimSpec(
        "cod_lite_onestep_speedup",
        "paper",
        "One-step decoding is fast: the N-step teacher's measured decode wall time over the one-step student's "
        "(reading the indices plus synthesis; median over interleaved repeats, at timing.height x timing.width on "
        "the machine at hand), as a fraction of N (N = sampler_steps; 1 = N times faster), paired bootstrap "
        "interval > 0.5",
        Test(">", 0.5),
        _speedup_over_n,
        reported="one_step_decoding",
        rests_on=("cod_lite_learned_student", "cod_lite_learned_teacher"),
        timing=True,
    ),
    ClaimSpec(
        "cod_lite_realtime_decode",
        "paper",
        f"Real-time decoding at the paper's resolution: the one-step student decodes 1920x1024 images (timing "
        f"size at full scale) at >= {REALTIME_FPS:g} frames per second on the machine at hand (1 / median decode "
        "time, bootstrap interval over repeats)",
        Test(">=", REALTIME_FPS),
        _fps,
        reported="decode_fps_a100_1920x1024",
        scales=("full",),
        rests_on=("cod_lite_learned_student",),
        timing=True,
    ),
    ClaimSpec(
        "cod_lite_perception_distortion",
        "paper",
        "Perception-distortion trade-off at equal bits (same bitstream): the MSE decoder's PSNR exceeds the "
        "one-step generative decoder's (dB, paired over (seed, image), bootstrap interval > 0)",
        Test(">", 0.0),
        _gap("onestep", "mse", "psnr", higher_better=True),
        reported="generative_tradeoff",
        rests_on=("cod_lite_learned_codec", "cod_lite_learned_student"),
    ),
    ClaimSpec(
        "cod_lite_compression_oriented_pretraining",
        "paper",
        "Compression-oriented pre-training beats generation-oriented pre-training at an equal budget (each "
        "pretrain_epochs then finetune_epochs on this codec's indices; pre-trained conditioned on a lower-rate "
        "code against unconditionally): the teacher's held-out conditional denoising loss (x-prediction MSE "
        "over a fixed timestep grid, how well it models p(image | code)), generation- minus compression-oriented, "
        "paired over (seed, image), interval > 0",
        Test(">", 0.0),
        _gap("gen_teacher_denoiser", "teacher_denoiser", "denoise", higher_better=False),
        reported="compression_oriented_pretraining",
        rests_on=("cod_lite_learned_teacher", "cod_lite_learned_gen_teacher"),
    ),
    ClaimSpec(
        "cod_lite_distilled_onestep_sharper",
        "paper",
        "Distribution-matching distillation (with its adversarial term) makes the single forward pass "
        "generative: the one-step student's patch distribution is closer to the originals than the teacher's "
        "own one-step pass (sliced Wasserstein distance of 4x4 patches, a non-standard offline perceptual "
        "proxy; teacher minus student, paired over (seed, image), interval > 0)",
        Test(">", 0.0),
        _gap("teacher_1", "onestep", "swd", higher_better=False),
        reported="one_step_decoding",
        rests_on=("cod_lite_learned_student", "cod_lite_learned_teacher"),
    ),
    ClaimSpec(
        "cod_lite_rate_below_jpeg",
        "paper",
        "At equal quality the codec needs fewer bits than JPEG: 1 - (one-step codec's bpp) / (the fewest bits "
        "per pixel Pillow's JPEG needs for at least the same MS-SSIM on that image: its rate-quality front over "
        "qualities and downscaling factors 1, 2, 4, scan bits; where even its cheapest file is better, that "
        "file's rate), mean over (seed, image), bootstrap interval > 0",
        Test(">", 0.0),
        _savings,
        reported="generative_tradeoff",
        rests_on=("cod_lite_learned_student",),
    ),
    ClaimSpec(
        "cod_lite_onestep_beats_mse_perceptual",
        "paper",
        "At the same bits the one-step generative decoder's patch distribution is closer to the originals than "
        "the MSE decoder's (sliced Wasserstein distance of 4x4 patches, non-standard offline proxy for patch "
        "FID; MSE minus one-step, paired over (seed, image), interval > 0); checked at full scale only: the "
        "brief asks for no perceptual claim at smoke scale",
        Test(">", 0.0),
        _gap("mse", "onestep", "swd", higher_better=False),
        reported="bit_savings_vs_msillm_equal_fid",
        scales=("full",),
        rests_on=("cod_lite_learned_codec", "cod_lite_learned_student"),
    ),
]
