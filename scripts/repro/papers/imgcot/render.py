"""Render a chain of thought into a grey image with the dynamic font-size rule (largest size that fits).

Pillow's ``ImageFont.load_default(size)`` is a scalable font when Pillow has FreeType, else a fixed bitmap
font (then every size renders the same; the fit check still holds). Which one was used is recorded.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont, features

MARGIN = 2


@lru_cache(maxsize=64)
def font(size: int):
    return ImageFont.load_default(size=size)


def font_name() -> str:
    return "Pillow default (FreeType, scalable)" if features.check("freetype2") else "Pillow default (bitmap)"


def _boxes(lines: list[str], size: int) -> list[tuple]:
    f, boxes, y = font(size), [], MARGIN
    for line in lines:
        left, top, right, bottom = f.getbbox(line)
        boxes.append((MARGIN + left, y + top, MARGIN + right, y + bottom))
        y += bottom + 1
    return boxes


def layout(lines: list[str], height: int, width: int, max_size: int, min_size: int = 4) -> tuple[int, list[tuple]]:
    """Largest font size in [min_size, max_size] whose line boxes all fit the canvas (bisection: text extent
    grows with the size), and each line's bounding box at that size."""

    def fits(size: int) -> bool:
        return all(b[2] <= width - MARGIN and b[3] <= height - MARGIN for b in _boxes(lines, size))

    lo, hi = min_size, max_size
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return lo, _boxes(lines, lo)


def render(lines: list[str], height: int, width: int, max_size: int) -> tuple[np.ndarray, int, bool]:
    """(image uint8 H x W, white text on black, font size used, whether every line's box lies inside)."""
    size, boxes = layout(lines, height, width, max_size)
    image = Image.new("L", (width, height), 0)
    draw = ImageDraw.Draw(image)
    f = font(size)
    for line, box in zip(lines, boxes):
        draw.text((MARGIN, box[1] - f.getbbox(line)[1]), line, fill=255, font=f)
    fits = all(0 <= b[0] and b[2] <= width and 0 <= b[1] and b[3] <= height for b in boxes)
    return np.asarray(image, dtype=np.uint8), size, fits
