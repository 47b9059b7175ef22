"""The paper's reported numbers (resources/<slug>/reported.yaml): claims take paper values from here only."""

from __future__ import annotations

import os

import yaml

from repro.claims import Claim
from repro.io import InputError


def load(path: str | os.PathLike) -> dict:
    """The reported-numbers file: ``source`` and ``reported`` (key -> {value, ...})."""
    try:
        content = yaml.safe_load(open(path))
    except (OSError, yaml.YAMLError) as err:
        raise InputError(path, f"cannot read reported numbers ({err})") from err
    if not isinstance(content, dict) or not isinstance(content.get("reported"), dict) or "source" not in content:
        raise InputError(path, "needs a 'source' and a 'reported' mapping")
    return content


def attach(claims: list[Claim], reported: dict) -> list[Claim]:
    """Give every claim the paper's number for its id when the paper reports one, and the paper's source."""
    for claim in claims:
        entry = reported["reported"].get(claim.id)
        claim.paper_value = entry["value"] if entry else None
        claim.paper_source = entry.get("source", reported["source"]) if entry else reported["source"]
    return claims
