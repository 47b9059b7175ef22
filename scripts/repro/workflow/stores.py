"""Opening zarr stores with errors that name the store (kept apart from repro.workflow.io so that
modules which never touch zarr do not depend on it)."""

from __future__ import annotations

import os

import zarr

from repro.workflow.io import InputError


def open_zarr_group(path: str | os.PathLike, key: str = "") -> zarr.Group:
    """Open the zarr group ``key`` of the store ``path`` read-only, or raise InputError naming both."""
    try:
        root = zarr.open_group(str(path), mode="r")
    except (FileNotFoundError, zarr.errors.GroupNotFoundError) as err:
        raise InputError(path, "not a zarr group (missing or unreadable store)") from err
    if not key:
        return root
    try:
        return root[key]
    except KeyError as err:
        raise InputError(path, f"has no group {key!r}") from err
