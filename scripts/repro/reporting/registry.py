"""The papers this project reproduces and the numbers each one reports: one registry, one loader.

``resources/papers.yaml`` holds each paper's identity (slug, title, short name, authors, sources,
code, licence). The numbers a paper reports live in ``resources/<slug>/reported.yaml``, one schema for
all papers (``workflow/schemas/reported.schema.yaml``), read by :func:`load_reported`; the rule that
reads them lists the file as an input. Claims take paper values from there, never from numbers typed
into code.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[3]
PAPERS_FILE = REPO_ROOT / "resources" / "papers.yaml"
REPORTED_SCHEMA = REPO_ROOT / "workflow" / "schemas" / "reported.schema.yaml"
IDENTITY = ("slug", "title", "short", "authors", "sources", "code", "licence")


def load_papers(path: str | os.PathLike = PAPERS_FILE) -> dict[str, dict[str, Any]]:
    """Return ``{slug: entry}`` in file order."""
    entries = yaml.safe_load(Path(path).read_text())["papers"]
    return {e["slug"]: e for e in entries}


def reported_path(slug: str) -> Path:
    """The reported-numbers file of paper ``slug``."""
    return REPO_ROOT / "resources" / slug / "reported.yaml"


def package_name(slug: str) -> str:
    """Python package name of a paper slug (``cgmt-erm`` -> ``cgmt_erm``)."""
    return slug.replace("-", "_")


def _schema_errors(content: Any) -> list[str]:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(yaml.safe_load(REPORTED_SCHEMA.read_text()))
    errors = sorted(validator.iter_errors(content), key=lambda e: [str(p) for p in e.absolute_path])
    out = []
    for error in errors:
        path = [str(p) for p in error.absolute_path]
        where = f"entry {path[1]!r}" if len(path) >= 2 and path[0] == "reported" else ".".join(path) or "top level"
        out.append(f"{where}{': ' + '.'.join(path[2:]) if len(path) > 2 else ''}: {error.message}")
    return out


def load_reported(path: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """A paper's ``resources/<slug>/reported.yaml`` as ``{key: {value, where, evidence, source, ...}}``.

    The file is checked against the one schema of reported numbers; an entry without its own
    ``source`` gets the file's. Errors raise :class:`repro.workflow.io.InputError` naming the file and the entry.
    """
    from repro.workflow.io import InputError

    try:
        content = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        raise InputError(path, f"cannot read reported numbers ({err})") from err
    if not isinstance(content, dict) or not isinstance(content.get("reported"), dict):
        raise InputError(path, "needs a 'reported' mapping")
    errors = _schema_errors(content)
    if errors:
        raise InputError(path, "not a valid reported-numbers file: " + "; ".join(errors))
    return {
        key: {**entry, "source": entry.get("source", content["source"])} for key, entry in content["reported"].items()
    }


def paper_value(reported: dict[str, dict[str, Any]], key: str) -> tuple[Any, str]:
    """(value, source) of one reported entry, for a claim's ``paper_value`` and ``paper_source``."""
    if key not in reported:
        raise KeyError(f"no reported entry {key!r}; have {sorted(reported)}")
    return reported[key]["value"], reported[key]["source"]


def attach_paper_values(claims: list, path: str | os.PathLike) -> list:
    """Give each claim the entry of ``path`` (a reported.yaml) keyed by the claim's id, if any.

    Claims without an entry keep no paper value and cite the file's top-level source.
    """
    reported = load_reported(path)
    default_source = yaml.safe_load(Path(path).read_text())["source"]
    for claim in claims:
        entry = reported.get(claim.id)
        claim.paper_value = entry["value"] if entry else None
        claim.paper_source = entry["source"] if entry else default_source
    return claims
