"""JPEG (Pillow) baseline: bits of the whole file and of the entropy-coded scan alone.

At tiny images a JPEG file is mostly header (quantisation and Huffman tables), so the rate is reported both
ways; the matched-bits comparison uses the scan payload, the fairer of the two for JPEG.
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


def jpeg_roundtrip(image: np.ndarray, quality: int) -> tuple[np.ndarray, int, int]:
    """(decoded uint8 image, file bits, scan bits) of one (H, W, 3) image at a Pillow quality."""
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="JPEG", quality=int(quality), optimize=True)
    data = buf.getvalue()
    with Image.open(io.BytesIO(data)) as img:
        decoded = np.asarray(img.convert("RGB"), dtype=np.uint8)
    return decoded, 8 * len(data), 8 * scan_bytes(data)


def interpolate_at(rate: float, rates: np.ndarray, values: np.ndarray) -> float:
    """A JPEG curve's value at ``rate`` (linear in rate between qualities); NaN outside the curve's range,
    so a rate JPEG cannot reach gives no comparison instead of an extrapolated one."""
    order = np.argsort(rates)
    r, v = np.asarray(rates, float)[order], np.asarray(values, float)[order]
    if not r[0] <= rate <= r[-1]:
        return float("nan")
    return float(np.interp(rate, r, v))
