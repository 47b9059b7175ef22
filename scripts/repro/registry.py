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
