"""What the paper reports, read from resources/poisson-eat/reported.yaml (statements with their source)."""

from __future__ import annotations

import os
from typing import Any

import yaml

from repro.io import InputError


def load_reported(path: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """``{key: {value, source}}``; every entry needs both fields."""
    try:
        entries = yaml.safe_load(open(path))["reported"]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as err:
        raise InputError(path, f"cannot read a 'reported' mapping ({err})") from err
    for key, entry in entries.items():
        if not isinstance(entry, dict) or "value" not in entry or "source" not in entry:
            raise InputError(path, f"entry {key!r} needs 'value' and 'source'")
    return entries


def statement(reported: dict[str, dict[str, Any]], key: str) -> tuple[Any, str]:
    """(paper value, source) of one reported item, for Claim's paper_value and paper_source."""
    if key not in reported:
        raise KeyError(f"reported.yaml has no entry {key!r}")
    return reported[key]["value"], reported[key]["source"]
