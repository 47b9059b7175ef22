"""The one manifest writer: what a data producer made, from what, under which licence and settings.

Every ``manifest.json`` (data sources, package data, a paper's own generated data) has the same fields,
checked against :data:`SCHEMA` before it is written: ``source`` (the producer kind: embedded, remote,
local, package_data, ...), ``producer`` (the module that wrote it), ``files`` (each ``{path, bytes,
sha256}``, paths relative to the manifest's folder where they lie under it), ``licence``, ``settings``
(the config the producer ran with), ``versions`` (packages that shaped the bytes) and optional
``details``. No wall-clock timestamps: a manifest is a rule output that provenance copies and tests
compare, so two runs of the same producer on the same input write the same manifest.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from repro.workflow.io import sha256, write_json
from repro.workflow.provenance import package_versions

FILE = {
    "type": "object",
    "required": ["path", "bytes", "sha256"],
    "additionalProperties": False,
    "properties": {
        "path": {"type": "string", "minLength": 1},
        "bytes": {"type": "integer", "minimum": 0},
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "url": {"type": ["string", "null"]},
        "role": {"type": "string"},
    },
}
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Data manifest (repro.workflow.manifest)",
    "type": "object",
    "required": ["source", "producer", "files", "licence", "settings", "versions"],
    "additionalProperties": False,
    "properties": {
        "source": {"type": "string", "minLength": 1},
        "producer": {"type": "string", "minLength": 1},
        "files": {"type": "array", "items": FILE},
        "licence": {"type": "string", "minLength": 1},
        "settings": {"type": "object"},
        "versions": {"type": "object", "additionalProperties": {"type": ["string", "null"]}},
        "details": {"type": "object"},
    },
}
# Keys that would carry a wall-clock time (they differ between two identical runs).
TIME_KEYS = {"retrieved", "created", "timestamp", "time", "date", "written", "downloaded"}


class ManifestError(ValueError):
    """A manifest that does not follow the schema; the message names the field."""


def relative_path(path: str | os.PathLike, root: str | os.PathLike | None) -> str:
    """``path`` relative to ``root`` when it lies under it (manifests do not depend on the working folder)."""
    if root is not None:
        try:
            return str(Path(path).resolve().relative_to(Path(root).resolve()))
        except ValueError:
            pass
    return str(path)


def file_record(path: str | os.PathLike, root: str | os.PathLike | None = None, **extra: Any) -> dict[str, Any]:
    """``{path, bytes, sha256}`` of one file or directory store (zarr: all its files), ``path`` relative to
    ``root`` when it lies under it."""
    path = Path(path)
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else path.stat().st_size
    return {"path": relative_path(path, root), "bytes": size, "sha256": sha256(path), **extra}


def _time_keys(node: Any, where: str) -> list[str]:
    if isinstance(node, Mapping):
        found = [f"{where}.{k}".lstrip(".") for k in node if str(k).lower() in TIME_KEYS]
        return found + [p for k, v in node.items() if k != "settings" for p in _time_keys(v, f"{where}.{k}")]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _time_keys(v, f"{where}[{i}]")]
    return []


def validate(doc: Mapping[str, Any]) -> None:
    """Raise :class:`ManifestError` naming every field that breaks the schema or holds a timestamp."""
    from jsonschema import Draft202012Validator

    problems = [
        f"{'.'.join(str(p) for p in e.absolute_path) or 'top level'}: {e.message}"
        for e in Draft202012Validator(SCHEMA).iter_errors(doc)
    ]
    problems += [f"{key}: wall-clock timestamps do not belong in a manifest" for key in _time_keys(doc, "")]
    if problems:
        raise ManifestError("invalid manifest: " + "; ".join(problems))


def build(
    *,
    source: str,
    producer: str,
    files: Iterable[Mapping[str, Any]],
    licence: str,
    settings: Mapping[str, Any],
    packages: Iterable[str] = (),
    details: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest document (validated); ``packages`` names the distributions whose versions it records."""
    doc: dict[str, Any] = {
        "source": source,
        "producer": producer,
        "files": [dict(f) for f in files],
        "licence": licence,
        "settings": dict(settings),
        "versions": package_versions(tuple(packages)),
    }
    if details is not None:
        doc["details"] = dict(details)
    validate(doc)
    return doc


def write_manifest(path: str | os.PathLike, **fields: Any) -> dict[str, Any]:
    """Build (see :func:`build`), validate and write a manifest atomically; return the document."""
    doc = build(**fields)
    write_json(path, doc)
    return doc
