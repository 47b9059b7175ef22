"""CoD-Lite's paper claims fail on counterfactual metrics the paper denies."""

import copy

import pytest

from repro.papers.cod_lite.claims import CLAIMS
from repro.reporting.claims import verdict

SEEDS = ("s0", "s1", "s2")
JITTER = (0.0, 0.1, -0.1)


def seed_metrics(j: float) -> dict:
    decoders = {
        "mse": {"psnr": 25.0 + j, "ms_ssim": 0.9, "swd": 0.05 + j / 100},
        "onestep": {"psnr": 23.0 + j, "ms_ssim": 0.85, "swd": 0.02 + j / 100},
        "teacher_1": {"psnr": 23.5 + j, "ms_ssim": 0.85, "swd": 0.04 + j / 100},
        "teacher_8": {"psnr": 23.2 + j, "ms_ssim": 0.86, "swd": 0.02 + j / 100},
        "gen_teacher_8": {"psnr": 22.0 + j, "ms_ssim": 0.8, "swd": 0.03 + j / 100},
    }
    return {
        "mismatches": 0,
        "images": 6,
        "coder_overhead_bits_min": 3.0,
        "coder_overhead_bits_max": 40.0,
        "decoders": decoders,
    }


def metrics() -> dict:
    return {
        "seeds": {s: seed_metrics(j) for s, j in zip(SEEDS, JITTER)},
        "sampler_steps": 8,
        "timing_ms_per_image": {"synth_onestep": 1.0, "synth_teacher_8": 8.4},
    }


def swap(m: dict, a: str, b: str, metric: str) -> dict:
    """The metrics with decoders a and b exchanging one metric."""
    out = copy.deepcopy(m)
    for s in out["seeds"].values():
        d = s["decoders"]
        d[a][metric], d[b][metric] = d[b][metric], d[a][metric]
    return out


def test_every_claim_passes_on_metrics_that_support_it():
    m = metrics()
    assert all(verdict(CLAIMS, c.id, m, scale="full") == "pass" for c in CLAIMS)


@pytest.mark.counterfactual("cod-lite", "cod_lite_onestep_speedup")
def test_one_step_that_costs_as_much_as_n_steps_fails():
    m = metrics()
    m["timing_ms_per_image"]["synth_onestep"] = 8.4
    assert verdict(CLAIMS, "cod_lite_onestep_speedup", m) == "fails"


@pytest.mark.counterfactual("cod-lite", "cod_lite_perception_distortion")
def test_generative_decoder_with_higher_psnr_fails():
    assert verdict(CLAIMS, "cod_lite_perception_distortion", swap(metrics(), "mse", "onestep", "psnr")) == "fails"


@pytest.mark.counterfactual("cod-lite", "cod_lite_compression_oriented_pretraining")
def test_generation_oriented_teacher_in_place_fails():
    m = swap(metrics(), "teacher_8", "gen_teacher_8", "psnr")
    assert verdict(CLAIMS, "cod_lite_compression_oriented_pretraining", m) == "fails"


@pytest.mark.counterfactual("cod-lite", "cod_lite_distilled_onestep_sharper")
def test_undistilled_one_step_in_place_fails():
    m = swap(metrics(), "teacher_1", "onestep", "swd")
    assert verdict(CLAIMS, "cod_lite_distilled_onestep_sharper", m) == "fails"


@pytest.mark.counterfactual("cod-lite", "cod_lite_onestep_beats_mse_perceptual")
def test_mse_decoder_numbers_in_place_of_one_step_fail():
    m = swap(metrics(), "mse", "onestep", "swd")
    assert verdict(CLAIMS, "cod_lite_onestep_beats_mse_perceptual", m, scale="full") == "fails"


def test_a_changed_latent_value_fails_the_lossless_check():
    m = metrics()
    m["seeds"]["s1"]["mismatches"] = 1
    assert verdict(CLAIMS, "cod_lite_bitstream_lossless", m) == "fails"


def test_bits_below_the_ideal_code_length_fail_the_rate_check():
    m = metrics()
    m["seeds"]["s2"]["coder_overhead_bits_min"] = -5.0
    assert verdict(CLAIMS, "cod_lite_rate_is_written_bits", m) == "fails"
