"""The held-out test images written by the data stage, read back by train, evaluate and figures (a module of
its own so that figures depend on the file format, not on the data stage's code)."""

from __future__ import annotations

import numpy as np

from repro.workflow.fields_io import load_arrays
from repro.workflow.io import InputError


def load_test(path: str) -> dict[str, np.ndarray]:
    data = load_arrays(path)
    if "ids" not in data:
        raise InputError(path, "missing 'ids'")
    images = {}
    for name in (str(i) for i in data["ids"]):
        img = data.get(f"img/{name}")
        if img is None or img.ndim != 3 or img.shape[-1] != 3 or img.dtype != np.uint8:
            raise InputError(path, f"test image {name!r} must be uint8 (H, W, 3)")
        images[name] = img
    return images
