"""CoD-Lite's paper claims fail on counterfactual metrics the paper denies (on metrics where every model learned);
an untrained model makes the claims resting on it inconclusive."""

import copy

import numpy as np
import pytest

from repro.papers.cod_lite.claims import CLAIMS
from repro.reporting.claims import verdict

ITEMS = 12
JITTER = np.linspace(-0.05, 0.05, ITEMS)


def decoder(psnr: float, ms_ssim: float, mse: float, swd: float) -> dict:
    return {
        "psnr": list(psnr + JITTER),
        "ms_ssim": list(ms_ssim + JITTER / 100),
        "mse": list(mse * (1 + JITTER)),
        "swd": list(swd + JITTER / 1000),
    }


def metrics() -> dict:
    items = {
        "mse": decoder(25.0, 0.90, 200.0, 0.050),
        "onestep": decoder(23.0, 0.86, 320.0, 0.020),
        "teacher_1": decoder(23.5, 0.85, 300.0, 0.040),
        "teacher_8": decoder(23.2, 0.87, 310.0, 0.018),
        "gen_teacher_8": decoder(22.0, 0.84, 360.0, 0.030),
        "untrained_onestep": decoder(9.0, 0.10, 7000.0, 0.18),
        "untrained_teacher_8": decoder(9.5, 0.12, 6500.0, 0.19),
        "mean_colour": {"mse": list(5000.0 * (1 + JITTER))},
        "teacher_denoiser": {"denoise": list(0.060 + JITTER / 100)},
        "gen_teacher_denoiser": {"denoise": list(0.070 + JITTER / 100)},
    }
    rng = np.random.default_rng(0)
    return {
        "items": items,
        "sampler_steps": 8,
        "timing_s": {
            "decode_onestep": list(0.010 + rng.uniform(0, 1e-3, 7)),
            "decode_teacher_8": list(0.080 + rng.uniform(0, 1e-3, 7)),
        },
        "timing_size": [1024, 1920],
        "jpeg_at_onestep_ms_ssim": [{"ours_bpp": 0.03, "jpeg_bpp": 0.2 + j} for j in JITTER],
        "fixed_length_error_bits": 0,
        "divisible_bpp_error": 0.0,
        "mismatches": 0,
    }


def swap(m: dict, a: str, b: str, metric: str) -> dict:
    out = copy.deepcopy(m)
    out["items"][a][metric], out["items"][b][metric] = m["items"][b][metric], m["items"][a][metric]
    return out


def test_every_claim_passes_on_metrics_that_support_it():
    m = metrics()
    assert {c.id: verdict(CLAIMS, c.id, m, scale="full") for c in CLAIMS} == {c.id: "pass" for c in CLAIMS}


def test_an_untrained_student_makes_its_claims_inconclusive():
    m = copy.deepcopy(metrics())
    m["items"]["onestep"]["mse"] = m["items"]["untrained_onestep"]["mse"]
    assert verdict(CLAIMS, "cod_lite_learned_student", m) == "fails"
    assert verdict(CLAIMS, "cod_lite_perception_distortion", m) == "inconclusive"


@pytest.mark.counterfactual("cod-lite", "cod_lite_onestep_speedup")
def test_one_step_that_costs_as_much_as_n_steps_fails():
    m = metrics()
    m["timing_s"]["decode_onestep"] = [t / 2 for t in m["timing_s"]["decode_teacher_8"]]
    assert verdict(CLAIMS, "cod_lite_onestep_speedup", m) == "fails"


@pytest.mark.counterfactual("cod-lite", "cod_lite_realtime_decode")
def test_a_decoder_slower_than_real_time_fails():
    m = metrics()
    m["timing_s"]["decode_onestep"] = [0.06] * 7
    assert verdict(CLAIMS, "cod_lite_realtime_decode", m, scale="full") == "fails"


@pytest.mark.counterfactual("cod-lite", "cod_lite_perception_distortion")
def test_generative_decoder_with_higher_psnr_fails():
    assert verdict(CLAIMS, "cod_lite_perception_distortion", swap(metrics(), "mse", "onestep", "psnr")) == "fails"


@pytest.mark.counterfactual("cod-lite", "cod_lite_compression_oriented_pretraining")
def test_generation_oriented_teacher_fitting_better_fails():
    m = swap(metrics(), "teacher_denoiser", "gen_teacher_denoiser", "denoise")
    assert verdict(CLAIMS, "cod_lite_compression_oriented_pretraining", m) == "fails"


@pytest.mark.counterfactual("cod-lite", "cod_lite_distilled_onestep_sharper")
def test_undistilled_one_step_in_place_fails():
    m = swap(metrics(), "teacher_1", "onestep", "swd")
    assert verdict(CLAIMS, "cod_lite_distilled_onestep_sharper", m) == "fails"


@pytest.mark.counterfactual("cod-lite", "cod_lite_rate_below_jpeg")
def test_jpeg_reaching_the_quality_with_fewer_bits_fails():
    m = metrics()
    m["jpeg_at_onestep_ms_ssim"] = [{"ours_bpp": 0.125, "jpeg_bpp": 0.04 + j / 10} for j in JITTER]
    assert verdict(CLAIMS, "cod_lite_rate_below_jpeg", m) == "fails"
    m["jpeg_at_onestep_ms_ssim"][0]["jpeg_bpp"] = None  # JPEG cannot reach the quality: unmeasured, fails
    assert (
        verdict(
            CLAIMS, "cod_lite_rate_below_jpeg", metrics() | {"jpeg_at_onestep_ms_ssim": m["jpeg_at_onestep_ms_ssim"]}
        )
        == "fails"
    )


@pytest.mark.counterfactual("cod-lite", "cod_lite_onestep_beats_mse_perceptual")
def test_mse_decoder_numbers_in_place_of_one_step_fail():
    m = swap(metrics(), "mse", "onestep", "swd")
    assert verdict(CLAIMS, "cod_lite_onestep_beats_mse_perceptual", m, scale="full") == "fails"


def test_checks_fail_on_a_changed_index_or_a_variable_length_payload():
    m = metrics()
    m["mismatches"] = 1
    assert verdict(CLAIMS, "cod_lite_bitstream_lossless", m) == "fails"
    m = metrics()
    m["fixed_length_error_bits"] = 3
    assert verdict(CLAIMS, "cod_lite_fixed_length_rate", m) == "fails"
