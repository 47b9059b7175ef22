"""Config validation against the JSON schema (draft 2020-12) in ``workflow/schemas``.

The top-level schema references one schema file per paper and per data source
(``papers/<slug>.schema.yaml``, ``data/<source>.schema.yaml``), so each module owns its
own section. Errors name the offending key path and the problem, e.g.
``config: papers.hysomi.epochs: -1 is less than the minimum of 1``.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable


class ConfigError(ValueError):
    """The config does not match the schema."""


# libyaml's loader where PyYAML has it: the schemas are read at every DAG build (35 papers: 70 files).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _registry(schema_dir: Path) -> Registry:
    # cached: the registry asks again for a schema at every reference to it (once per paper for defs)
    @functools.cache
    def retrieve(uri: str) -> Resource:
        path = schema_dir / uri
        if not path.exists():
            raise ConfigError(f"schema {uri} not found in {schema_dir} (is that module built?)")
        return Resource.from_contents(yaml.load(path.read_text(), Loader=_LOADER))

    return Registry(retrieve=retrieve)


def _where(error) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "<top level>"


def validate_config(config: dict[str, Any], schema_file: str | os.PathLike) -> None:
    """Raise :class:`ConfigError` listing every violation of the schema in ``config``."""
    schema_file = Path(schema_file)
    schema = yaml.safe_load(schema_file.read_text())
    validator = Draft202012Validator(schema, registry=_registry(schema_file.parent))
    try:
        errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    except Unresolvable as err:
        raise ConfigError(f"config: cannot resolve schema reference ({err})") from err
    if errors:
        lines = [f"config: {_where(e)}: {e.message}" for e in errors]
        raise ConfigError("invalid config\n" + "\n".join(lines))


def enabled_papers(config: dict[str, Any]) -> list[str]:
    """Slugs of the papers whose section says ``enabled: true``, in config order."""
    return [slug for slug, section in config.get("papers", {}).items() if section.get("enabled", True)]
