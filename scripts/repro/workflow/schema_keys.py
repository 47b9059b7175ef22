"""What the config schema says about a key beyond its type: is it a size key, does it name a user's data?

Two annotations (JSON Schema ignores keywords it does not know, so validation is unchanged):

- ``x-size: true``: a size of the computation (counts of samples, files, trajectories, scenes, clips;
  epochs and steps; widths and depths; resolutions; repeats). ``config/rehearsal.yaml`` may set only these,
  the locations of user data and a remote source's switch to its local producer, so that the rehearsal
  runs every reader, model, loss and claim of paper scale (tests/test_rehearsal_overlay.py).
- ``x-user-path: file | folder``: the value (a string, or strings anywhere below it: a list, a mapping of
  splits) names a file or folder the user puts in place. Each becomes an input of the stage that reads it
  (``workflow/rules/common.smk``: ``user_inputs``), so that replacing it reruns what it feeds.

An annotation on a key covers everything below it (``x-size`` on ``seeds`` covers the list).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

SIZE = "x-size"
USER_PATH = "x-user-path"
USER_PATH_KINDS = ("file", "folder")
SCHEMA_DIR = Path(__file__).resolve().parents[3] / "workflow" / "schemas"
_COMBINERS = ("allOf", "anyOf", "oneOf", "then", "else")


# libyaml's loader where PyYAML has it: every parse of the workflow reads the schemas (35 papers: 70 files).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _load(path: Path) -> dict[str, Any]:
    return yaml.load(path.read_text(), Loader=_LOADER)


@functools.cache
def _ref_file(base: Path, file_part: str) -> Path:
    return (base.parent / file_part).resolve()


def _resolve(node: Mapping[str, Any], base: Path) -> list[tuple[dict[str, Any], Path]]:
    """``node`` and every schema it stands for through ``$ref`` and the combiners, each with the file it lives in."""
    out = [(dict(node), base)]
    ref = node.get("$ref")
    if ref:
        file_part, _, pointer = ref.partition("#")
        target_file = _ref_file(base, file_part) if file_part else base
        target: Any = _load(target_file)
        for part in filter(None, pointer.split("/")):
            target = target[part]
        out += _resolve(target, target_file)
    for key in _COMBINERS:
        value = node.get(key)
        for sub in value if isinstance(value, list) else [value] if isinstance(value, dict) else []:
            out += _resolve(sub, base)
    return out


def _children(nodes: list[tuple[dict[str, Any], Path]], key: str | int) -> list[tuple[dict[str, Any], Path]]:
    found: list[tuple[dict[str, Any], Path]] = []
    for node, base in nodes:
        if isinstance(key, int):
            for sub in [node.get("items")] + list(node.get("prefixItems", []))[key : key + 1]:
                if isinstance(sub, dict):
                    found += _resolve(sub, base)
            continue
        if key in node.get("properties", {}):
            found += _resolve(node["properties"][key], base)
        for pattern, sub in node.get("patternProperties", {}).items():
            if re.search(pattern, key):
                found += _resolve(sub, base)
        if isinstance(node.get("additionalProperties"), dict):
            found += _resolve(node["additionalProperties"], base)
    return found


def _own(nodes: list[tuple[dict[str, Any], Path]]) -> dict[str, Any]:
    return {k: v for node, _ in nodes for k, v in node.items() if k.startswith("x-")}


@functools.cache
def _at(path: tuple[str | int, ...], schema_file: Path) -> tuple[list[tuple[dict[str, Any], Path]], dict[str, Any]]:
    """(schemas of the key at ``path``, the annotations that hold there), built from its parent's."""
    if not path:
        nodes = _resolve(_load(schema_file), schema_file)
        return nodes, _own(nodes)
    parent, found = _at(path[:-1], schema_file)
    nodes = _children(parent, path[-1])
    return nodes, found | _own(nodes)


def annotations(path: tuple[str | int, ...], schema_file: Path = SCHEMA_DIR / "config.schema.yaml") -> dict[str, Any]:
    """The ``x-`` annotations that hold for the config key at ``path`` (its own and its ancestors')."""
    return dict(_at(tuple(path), schema_file.resolve())[1])


def leaves(value: Any, prefix: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Every leaf of a config mapping with its key path; a list is a leaf (an overlay replaces it whole), an
    empty mapping none (merged over a section, it changes nothing)."""
    if isinstance(value, Mapping):
        for key, sub in value.items():
            yield from leaves(sub, (*prefix, key))
    else:
        yield prefix, value


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for sub in value.values():
            yield from _strings(sub)
    elif isinstance(value, list):
        for sub in value:
            yield from _strings(sub)


def user_paths(
    section: Mapping[str, Any], prefix: tuple[str, ...], schema_file: Path = SCHEMA_DIR / "config.schema.yaml"
) -> list[tuple[str, str, str]]:
    """``(key, kind, path)`` for every user file or folder named in ``section`` (the config at ``prefix``,
    e.g. ``("papers", "pdrf")``), found through ``x-user-path``; ``key`` is the dotted config key."""
    found: list[tuple[str, str, str]] = []
    schema_file = schema_file.resolve()

    def walk(value: Any, path: tuple[str | int, ...]) -> None:
        kind = _at(path, schema_file)[1].get(USER_PATH)
        if kind is not None:
            if kind not in USER_PATH_KINDS:
                raise ValueError(f"schema: {USER_PATH} of {'.'.join(map(str, path))} must be one of {USER_PATH_KINDS}")
            found.extend((".".join(map(str, path)), kind, p) for p in _strings(value))
        elif isinstance(value, Mapping):
            for key, sub in value.items():
                walk(sub, (*path, key))
        elif isinstance(value, list):
            for i, sub in enumerate(value):
                walk(sub, (*path, i))

    walk(section, prefix)
    return found
