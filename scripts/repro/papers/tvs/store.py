"""The canonical motion format: one ``motions.npz`` with ``qpos`` (clip, frame, nq), ``qvel`` and ``qacc``
(clip, frame, nv), ``flaw_mask`` (clip, frame), ``family``, ``level``, ``flaw`` (clip,) and scalars ``fps`` and
``model_xml`` (the package member the coordinates refer to). The generator and the AMASS/BVH converters write it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.workflow.io import InputError, atomic_path

KEYS = ("qpos", "qvel", "qacc", "flaw_mask", "family", "level", "flaw", "fps", "model_xml")


def write_motions(path: str | Path, **arrays) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, **{k: np.asarray(arrays[k]) for k in KEYS})


def read_motions(path: str | Path, nq: int, nv: int) -> dict:
    """The motions file, checked against the model's coordinate sizes; errors name the file."""
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in KEYS if k in z}
    except (OSError, ValueError) as err:
        raise InputError(path, f"not a readable motions file ({err})") from err
    missing = [k for k in KEYS if k not in data]
    if missing:
        raise InputError(path, f"missing arrays {missing}")
    clips, frames = data["qpos"].shape[:2]
    if (
        data["qpos"].shape[2] != nq
        or data["qvel"].shape != (clips, frames, nv)
        or data["qacc"].shape != (clips, frames, nv)
    ):
        raise InputError(path, f"expected qpos (clips, frames, {nq}) and qvel/qacc (clips, frames, {nv})")
    if data["flaw_mask"].shape != (clips, frames):
        raise InputError(path, "flaw_mask does not match qpos")
    if not np.all(np.isfinite(data["qpos"])):
        raise InputError(path, "qpos holds non-finite values")
    return data
