"""Reading the stage files (npz) with errors that name the file and what is missing."""

from __future__ import annotations

import numpy as np

from repro.workflow.io import InputError


def load_arrays(path: str, keys: tuple[str, ...], what: str) -> dict[str, np.ndarray]:
    """Every array of the npz file ``path``; ``keys`` must be among them."""
    try:
        with np.load(path) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot read the {what} ({err})") from err
    missing = [k for k in keys if k not in arrays]
    if missing:
        raise InputError(path, f"missing arrays {missing}")
    return arrays
