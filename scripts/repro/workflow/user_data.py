"""The user's data files as rule inputs: what a config key names becomes an input of the stage reading it.

Why: a corrected data file put in place must rerun exactly what it feeds, and a missing one must stop the
run before any job starts, naming the file, the config key and where the docs say how to get it. Keys that
name user data carry ``x-user-path`` in the schema (:mod:`repro.workflow.schema_keys`).

A user path becomes one input: the folder of a rehearsal fixture rule when it lies inside one (the rule
writes it), the listing of a folder (:func:`folder_listing`: a replaced member rewrites it, so what reads
the folder reruns), or the file itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from repro.workflow.schema_keys import user_paths

USER_LISTINGS = Path("data/user-listings")


class UserDataMissing(Exception):
    """A file or folder the config names is not there (raised while the DAG is built, before any job)."""


def missing_message(key: str, path: str, docs: str) -> str:
    """The one block a user reads when a file the config names is not there."""
    return (
        f"user data missing: {path}\n"
        f"  config key: {key}\n"
        f"  what to do: obtain it as {docs} describes and put it at that path, or point {key} at it"
    )


def folder_listing(key: str, folder: str | Path, listings: Path = USER_LISTINGS) -> str:
    """Path of the listing of a user's folder (each member's name, bytes and mtime), rewritten only when
    a member changed so that its modification time says when the folder last changed."""
    members = sorted(
        [str(f.relative_to(folder)), f.stat().st_size, f.stat().st_mtime_ns]
        for f in Path(folder).rglob("*")
        if f.is_file()
    )
    listing = listings / f"{key}.json"
    text = json.dumps({"folder": str(folder), "members": members}, indent=0)
    if not listing.is_file() or listing.read_text() != text:
        listing.parent.mkdir(parents=True, exist_ok=True)
        listing.write_text(text)
    return str(listing)


def user_input(key: str, kind: str, path: str, docs: str, fixture_dirs: Sequence[str] = ()) -> str:
    """The rule input standing for one user path (see the module docstring)."""
    fixture = next((d for d in fixture_dirs if path == d or path.startswith(f"{d}/")), None)
    if fixture is not None:
        return fixture
    if kind == "folder" and Path(path).is_dir():
        return folder_listing(key, path)
    if Path(path).is_file():
        return path
    raise UserDataMissing(missing_message(key, path, docs))


def user_inputs(
    section: Mapping[str, Any], prefix: Sequence[str], docs: str, fixture_dirs: Sequence[str] = ()
) -> Callable[[Any], list[str]]:
    """Input function of a rule: every user file or folder named in ``section`` (the config at ``prefix``)."""
    entries = user_paths(section, tuple(prefix))

    def inputs(wildcards: Any) -> list[str]:
        return list(dict.fromkeys(user_input(key, kind, path, docs, fixture_dirs) for key, kind, path in entries))

    return inputs
