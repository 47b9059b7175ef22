"""Range coding, JPEG rate accounting and the shared image metrics used by CoD-Lite."""

import io

import numpy as np
import pytest
from PIL import Image

from repro.metrics.images import ms_ssim, msssim_window, psnr, sliced_wasserstein
from repro.papers.cod_lite import coding, jpeg


def test_range_coder_round_trip_and_rate_near_ideal():
    rng = np.random.default_rng(0)
    pmf = rng.dirichlet(np.ones(7), size=3)
    q = np.stack([rng.choice(7, size=(8, 8), p=p) for p in pmf]) - 3
    words = coding.encode(q, pmf)
    assert np.array_equal(coding.decode(words, pmf, q.shape), q)
    excess = 32 * len(words) - coding.ideal_bits(q, pmf)
    assert 0 <= excess <= 64


def test_a_symbol_outside_the_alphabet_is_refused():
    with pytest.raises(ValueError, match="alphabet"):
        coding.encode(np.full((1, 2, 2), 5), np.full((1, 7), 1 / 7))


def test_jpeg_scan_is_the_file_minus_its_headers():
    rng = np.random.default_rng(1)
    img = rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)
    decoded, file_bits, scan_bits = jpeg.jpeg_roundtrip(img, 50)
    assert decoded.shape == img.shape
    assert 0 < scan_bits < file_bits
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="JPEG", quality=50, optimize=True)
    assert file_bits == 8 * len(buf.getvalue())


def test_jpeg_interpolation_refuses_rates_outside_the_curve():
    rates, values = np.array([0.5, 1.0, 2.0]), np.array([20.0, 24.0, 28.0])
    assert jpeg.interpolate_at(1.5, rates, values) == pytest.approx(26.0)
    assert np.isnan(jpeg.interpolate_at(0.1, rates, values))


def test_psnr_of_a_known_error():
    a = np.zeros((1, 4, 4, 3), np.uint8)
    b = np.full((1, 4, 4, 3), 10, np.uint8)
    assert psnr(a, b)[0] == pytest.approx(10 * np.log10(255**2 / 100))


def test_ms_ssim_is_one_on_identical_images_and_window_fits_size():
    rng = np.random.default_rng(2)
    img = rng.integers(0, 256, (2, 64, 64, 3), dtype=np.uint8)
    assert msssim_window(64, 64) == 3 and msssim_window(512, 768) == 11
    assert np.allclose(ms_ssim(img, img), 1.0)
    noisy = np.clip(img.astype(int) + rng.integers(-40, 40, img.shape), 0, 255).astype(np.uint8)
    assert np.all(ms_ssim(noisy, img) < 1.0)


def test_sliced_wasserstein_separates_blur_from_identity():
    rng = np.random.default_rng(3)
    img = rng.integers(0, 256, (2, 16, 16, 3), dtype=np.uint8)
    flat = np.broadcast_to(img.mean(axis=(1, 2), keepdims=True), img.shape).astype(np.uint8)
    assert sliced_wasserstein(img, img) == 0.0
    assert sliced_wasserstein(flat, img) > 0.05
