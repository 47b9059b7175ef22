"""Config validation against the JSON schema (draft 2020-12) in ``workflow/schemas``.

The top-level schema references one schema file per paper and per data source
(``papers/<slug>.schema.yaml``, ``data/<source>.schema.yaml``), so each module owns its
own section. Errors name the offending key path and the problem, e.g.
``config: papers.hysomi.epochs: -1 is less than the minimum of 1``.

Config files are also read strictly (:func:`load_strict`): YAML silently keeps the last of two
equal keys in a mapping, so a key set twice would run with a value its author may not expect.
The Snakefile checks every config file of the run (the default and each ``--configfile``) and
stops naming the file, the line and the key.
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
    """The config does not match the schema, or a config file sets a key twice."""


# libyaml's loader where PyYAML has it: the schemas and config files are read at every parse of the workflow
# (35 papers: 70 schema files), and every cluster job parses it again.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_LOADER):
    """A safe loader that refuses a mapping holding the same key twice."""

    path = "<config>"

    def construct_mapping(self, node, deep=False):
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *anchor` brings keys the mapping may override on purpose
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise ConfigError(
                    f"{self.path}:{line}: key {key!r} is set twice in the same mapping (first on line {seen[key]}); "
                    "YAML would silently keep the last value: remove one"
                )
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def load_strict(path: str | os.PathLike) -> Any:
    """Parse a YAML config file, raising :class:`ConfigError` (file, line, key) on a duplicate key."""
    text = Path(path).read_text()
    loader = _StrictLoader(text)
    loader.path = str(path)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_CONFIG = REPO_ROOT / "config" / "config.yaml"


def deep_merge(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """``base`` updated by ``overlay`` as Snakemake merges a ``--configfile`` over the default.

    Mappings merge key by key; any other value (a list, a number) replaces the base's. Returns a new dict.
    """
    merged = dict(base)
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_config(*overlays: str | os.PathLike, default: str | os.PathLike = DEFAULT_CONFIG) -> dict[str, Any]:
    """The config a run with ``--configfile OVERLAY ...`` sees: the default with each overlay merged over it.

    ``load_config("config/full.yaml")`` is the paper-scale config; ``load_config()`` the embedded default.
    Relative overlay paths are taken from the repository root.
    """
    config = load_strict(default)
    for overlay in overlays:
        config = deep_merge(config, load_strict(REPO_ROOT / overlay))
    return config


def check_config_files(paths) -> None:
    """Read every config file of a run strictly (Snakemake's own loader keeps duplicates silently)."""
    for path in dict.fromkeys(str(p) for p in paths):
        load_strict(path)


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
    schema = yaml.load(schema_file.read_text(), Loader=_LOADER)
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


def papers_of_cluster_job(papers: list[str], argv: list[str]) -> list[str]:
    """The papers whose rules a cluster job's Snakemake (``--mode remote``) may run, from its command line.

    Every cluster job starts Snakemake twice (the batch step and its ``srun`` step), and each start parses
    the workflow; a job runs one paper's stages (or one data source's rule), which Snakemake names in
    ``--allowed-rules``, and only those rules are considered for its DAG. Parsing only the rule files of the
    papers those names belong to (stage rules are ``<slug>_<stage>``, slug dashes as underscores; the paper's
    target rule is ``<slug>``) keeps the parse from growing with the number of papers. Without
    ``--allowed-rules`` every paper is parsed; a rule name that two slugs could own keeps both.
    """
    if "--allowed-rules" not in argv:
        return papers
    rules = []
    for arg in argv[argv.index("--allowed-rules") + 1 :]:
        if arg.startswith("-"):
            break
        rules.append(arg)
    tags = {slug: slug.replace("-", "_") for slug in papers}
    return [slug for slug, tag in tags.items() if any(r == tag or r.startswith(f"{tag}_") for r in rules)]
