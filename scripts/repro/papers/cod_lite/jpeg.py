"""JPEG (Pillow) baseline: bits of the whole file and of the entropy-coded scan alone, at a quality and a
downscaling factor (the image downscaled by an area filter, coded, decoded and upscaled back bicubically: the
usual way to stretch JPEG to low rates), and the rate JPEG needs to reach a given quality.

At small images a JPEG file is mostly header (quantisation and Huffman tables), so the rate is reported both
ways; the comparison at matched quality uses the scan payload, the fairer of the two for JPEG.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image


def scan_bytes(data: bytes) -> int:
    """Bytes of the entropy-coded data: from the end of the (last) SOS header to the EOI marker."""
    sos = data.rfind(b"\xff\xda")
    eoi = data.rfind(b"\xff\xd9")
    if sos < 0 or eoi < sos:
        raise ValueError("not a baseline JPEG stream (no SOS ... EOI)")
    header_len = int.from_bytes(data[sos + 2 : sos + 4], "big")
    return eoi - (sos + 2 + header_len)


def jpeg_roundtrip(image: np.ndarray, quality: int, downscale: int = 1) -> tuple[np.ndarray, int, int]:
    """(decoded uint8 image at the input's size, file bits, scan bits) of one (H, W, 3) image at a Pillow
    quality, coded at 1/downscale of its size."""
    h, w = image.shape[:2]
    src = Image.fromarray(image)
    if downscale > 1:
        src = src.resize((max(1, round(w / downscale)), max(1, round(h / downscale))), Image.Resampling.BOX)
    buf = io.BytesIO()
    src.save(buf, format="JPEG", quality=int(quality), optimize=True)
    data = buf.getvalue()
    with Image.open(io.BytesIO(data)) as img:
        decoded = img.convert("RGB")
        if downscale > 1:
            decoded = decoded.resize((w, h), Image.Resampling.BICUBIC)
        decoded = np.asarray(decoded, dtype=np.uint8)
    return decoded, 8 * len(data), 8 * scan_bytes(data)


def pareto_front(rates: np.ndarray, qualities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points no other point beats at a lower or equal rate: rate and quality both increasing."""
    order = np.lexsort((-np.asarray(qualities, float), np.asarray(rates, float)))
    r, q = np.asarray(rates, float)[order], np.asarray(qualities, float)[order]
    keep = q > np.maximum.accumulate(np.r_[-np.inf, q[:-1]])
    return r[keep], q[keep]


def rate_at_quality(quality: float, rates: np.ndarray, qualities: np.ndarray) -> float:
    """The fewest bits JPEG needs for at least ``quality``: on its front, log-rate linear in quality between
    points; below the front's lowest quality, the front's lowest rate (no JPEG file is cheaper, and that one is
    already better); NaN above its highest quality (JPEG cannot reach it: no extrapolation)."""
    r, q = pareto_front(rates, qualities)
    if quality > q[-1] or not np.isfinite(quality):
        return float("nan")
    if quality <= q[0]:
        return float(r[0])
    return float(np.exp(np.interp(quality, q, np.log(r))))
