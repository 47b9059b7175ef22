"""The list of papers this project reproduces and the numbers each one reports.

``resources/papers.yaml`` is the single source: slug, title, sources and the reported
numbers (with where in the paper they come from). Claims take paper values from here,
never from numbers typed into code.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
PAPERS_FILE = REPO_ROOT / "resources" / "papers.yaml"


def load_papers(path: str | os.PathLike = PAPERS_FILE) -> dict[str, dict[str, Any]]:
    """Return ``{slug: entry}`` in file order."""
    entries = yaml.safe_load(Path(path).read_text())["papers"]
    return {e["slug"]: e for e in entries}


def reported(slug: str, key: str, path: str | os.PathLike = PAPERS_FILE) -> dict[str, Any]:
    """Return the reported number ``key`` of paper ``slug`` as ``{value, unit, source, ...}``."""
    papers = load_papers(path)
    try:
        return papers[slug]["reported"][key]
    except KeyError as err:
        raise KeyError(f"{path}: paper {slug!r} has no reported number {key!r}") from err


def package_name(slug: str) -> str:
    """Python package name of a paper slug (``cgmt-erm`` -> ``cgmt_erm``)."""
    return slug.replace("-", "_")


def load_reported(path: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """A paper's ``resources/<slug>/reported.yaml``: ``{key: {value, source, ...}}``.

    The file holds ``reported:`` (key -> entry with ``value``) and optionally a top-level ``source``
    that entries without their own inherit. Every entry must end up with a value and a source.
    """
    from repro.io import InputError

    try:
        content = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        raise InputError(path, f"cannot read reported numbers ({err})") from err
    if not isinstance(content, dict) or not isinstance(content.get("reported"), dict):
        raise InputError(path, "needs a 'reported' mapping")
    entries = {}
    for key, entry in content["reported"].items():
        if not isinstance(entry, dict) or "value" not in entry:
            raise InputError(path, f"entry {key!r} needs a 'value'")
        source = entry.get("source", content.get("source"))
        if source is None:
            raise InputError(path, f"entry {key!r} has no 'source' and the file gives none")
        entries[key] = {**entry, "source": source}
    return entries


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
    default_source = yaml.safe_load(Path(path).read_text()).get("source")
    for claim in claims:
        entry = reported.get(claim.id)
        claim.paper_value = entry["value"] if entry else None
        claim.paper_source = entry["source"] if entry else default_source
    return claims
