"""config/rehearsal.yaml changes only sizes and the locations of user data, so the rehearsal runs paper
scale's own readers, models, losses, samplers and claims (DESIGN.md, "Scales").

A key may appear in the overlay when the schema marks it (or a key above it) ``x-size`` or ``x-user-path``
(repro.workflow.schema_keys), or when it switches a data source from ``remote`` to ``local`` (a local
producer reads the same files the download writes), with that local producer's settings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repro.workflow.config import load_config, load_strict, validate_config
from repro.workflow.schema_keys import SIZE, USER_PATH, annotations, leaves

REPO = Path(__file__).resolve().parents[1]
REHEARSAL = REPO / "config/rehearsal.yaml"


def _source_switch(path: tuple, full: dict, rehearsal: dict) -> bool:
    """``data.<source>.source: local`` over a remote full-scale source, or a key of that local producer."""
    if path[0] != "data" or len(path) < 3:
        return False
    switched = rehearsal["data"][path[1]].get("source") == "local" and full["data"][path[1]].get("source") == "remote"
    return switched and (path[2] == "source" or path[2] == "local")


def disallowed_keys(rehearsal: dict, full: dict) -> list[str]:
    """Dotted keys of ``rehearsal`` that are neither size keys, user-data locations nor a source switch."""
    bad = []
    for path, _ in leaves(rehearsal):
        if not path:
            continue
        marks = annotations(path)
        if SIZE in marks or USER_PATH in marks or _source_switch(path, full, rehearsal):
            continue
        bad.append(".".join(map(str, path)))
    return bad


def test_rehearsal_sets_only_size_keys_and_data_locations():
    full = load_config("config/full.yaml")
    bad = disallowed_keys(load_strict(REHEARSAL), full)
    assert not bad, f"config/rehearsal.yaml sets keys that are not size keys or data locations: {bad}"


def test_rehearsal_config_validates():
    validate_config(
        load_config("config/full.yaml", "config/rehearsal.yaml"), REPO / "workflow/schemas/config.schema.yaml"
    )


@pytest.mark.parametrize(
    "overlay, bad",
    [
        ({"papers": {"holi-spatial": {"scenes": 2}}}, []),
        ({"papers": {"holi-spatial": {"scannet": {"root": "data/fixtures/scannet"}}}}, []),
        ({"papers": {"holi-spatial": {"fusion": {"trunc": 0.3}}}}, ["papers.holi-spatial.fusion.trunc"]),
        (
            {"papers": {"holi-spatial": {"resources": {"data": {"mem_mb": 100}}}}},
            ["papers.holi-spatial.resources.data.mem_mb"],
        ),
    ],
)
def test_a_key_that_is_no_size_is_refused(overlay, bad):
    overlay = {"papers": {}, "data": {}} | overlay
    assert disallowed_keys(overlay, load_config("config/full.yaml")) == bad
