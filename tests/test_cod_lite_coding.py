"""The fixed-length bitstream, JPEG rate accounting and matched-quality rates, and the image metrics used by
CoD-Lite."""

import io

import numpy as np
import pytest
from PIL import Image

from repro.metrics.images import ms_ssim, msssim_window, psnr, sliced_wasserstein
from repro.papers.cod_lite import coding, jpeg


def test_fixed_length_stream_round_trips_and_costs_bits_per_token():
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 256, size=(4, 6))
    stream = coding.encode(idx, 8, 61, 90)
    back, h, w = coding.decode(stream, 8, 16)
    assert np.array_equal(back, idx) and (h, w) == (61, 90)
    assert 8 * len(stream) == coding.HEADER_BITS + 8 * 4 * 6  # exactly bits x tokens, plus the header
    odd = rng.integers(0, 16, size=(3, 5))  # 4-bit tokens: 60 bits, padded to 64
    stream = coding.encode(odd, 4, 48, 80)
    assert 8 * len(stream) - coding.HEADER_BITS == 64 and coding.payload_bits(4, odd.size) == 60
    assert np.array_equal(coding.decode(stream, 4, 16)[0], odd)


def test_bad_indices_sizes_and_short_streams_are_refused():
    with pytest.raises(ValueError, match="codebook"):
        coding.encode(np.array([[256]]), 8, 16, 16)
    with pytest.raises(ValueError, match="16-bit"):
        coding.encode(np.zeros((1, 1), int), 8, 70000, 16)
    stream = coding.encode(np.zeros((2, 2), int), 8, 32, 32)
    with pytest.raises(ValueError, match="too short"):
        coding.decode(stream[:-1], 8, 16)


def test_jpeg_scan_is_the_file_minus_its_headers_and_downscaling_keeps_the_size():
    rng = np.random.default_rng(1)
    img = rng.integers(0, 256, (32, 48, 3), dtype=np.uint8)
    decoded, file_bits, scan_bits = jpeg.jpeg_roundtrip(img, 50)
    assert decoded.shape == img.shape and 0 < scan_bits < file_bits
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="JPEG", quality=50, optimize=True)
    assert file_bits == 8 * len(buf.getvalue())
    small, _, small_scan = jpeg.jpeg_roundtrip(img, 50, downscale=4)
    assert small.shape == img.shape and small_scan < scan_bits


def test_rate_at_quality_reads_the_front_and_never_extrapolates_upwards():
    rates = np.array([0.1, 0.2, 0.4, 0.3])
    quality = np.array([0.5, 0.7, 0.9, 0.6])  # (0.3, 0.6) is dominated by (0.2, 0.7)
    r, q = jpeg.pareto_front(rates, quality)
    assert r.tolist() == [0.1, 0.2, 0.4] and q.tolist() == [0.5, 0.7, 0.9]
    assert jpeg.rate_at_quality(0.6, rates, quality) == pytest.approx(np.sqrt(0.1 * 0.2))
    assert jpeg.rate_at_quality(0.3, rates, quality) == 0.1  # below the front: its cheapest file
    assert np.isnan(jpeg.rate_at_quality(0.95, rates, quality))


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
