"""The files a stage's code is made of: the import closure of its entry module inside ``scripts/repro``.

Rules list these files as inputs, so editing a module reruns exactly the stages that import it,
directly or through other repro modules (a shared metric reruns every paper that uses it; a figures
module reruns figures only). Imports are read statically with :mod:`ast`, including those inside
functions, so the closure is known when the DAG is built without importing anything.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
from pathlib import Path

PACKAGE = "repro"
SCRIPTS = Path(__file__).resolve().parents[2]


def module_file(module: str, scripts: Path = SCRIPTS) -> Path | None:
    """Source file of a ``repro`` module or package, or None when it is not one of ours."""
    base = scripts.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_of(path: Path, scripts: Path) -> list[str]:
    parts = list(path.relative_to(scripts).with_suffix("").parts)
    return parts[:-1] if parts[-1] != "__init__" else parts[:-1]


def imported_modules(path: Path, scripts: Path = SCRIPTS) -> set[str]:
    """Dotted names of the repro modules ``path`` imports (``from a import b`` also yields ``a.b``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = _package_of(path, scripts)
                package = package[: len(package) - node.level + 1]
                base = ".".join(package + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in found if m == PACKAGE or m.startswith(PACKAGE + ".")}


@functools.cache
def _imports(path: Path, scripts: Path) -> frozenset[str]:
    """:func:`imported_modules`, parsed once per file per process (every stage's closure shares repro's core)."""
    return frozenset(imported_modules(path, scripts))


def _with_parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


@functools.cache
def import_closure(entry: str, scripts: Path = SCRIPTS) -> tuple[Path, ...]:
    """Every repro source file that running ``entry`` executes, parents' ``__init__`` files included."""
    seen: set[Path] = set()
    todo = ["repro.workflow.entry", *_with_parents(entry)]
    while todo:
        path = module_file(todo.pop(), scripts)
        if path is None or path in seen:
            continue
        seen.add(path)
        for module in _imports(path, scripts):
            todo.extend(_with_parents(module))
    if module_file(entry, scripts) is None:
        raise ModuleNotFoundError(f"stage entry {entry!r} has no file under {scripts}")
    return tuple(sorted(seen))


STAMPS = Path(".snakemake/repro-code")


@functools.cache
def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def code_stamp(entry: str, scripts: Path = SCRIPTS, folder: Path = STAMPS) -> str:
    """One file standing for the import closure of ``entry``: the closure's paths and sha256s, with the
    modification time of its newest file. A rule lists this one file as its code input instead of every
    file of the closure (16 for a typical training stage).

    Why: Snakemake's scheduler stats every input of every ready job at each scheduling pass, so many small
    code inputs cost the engine a large share of a run's CPU. The stamp reruns exactly what the closure
    did: an edit changes its content and makes it newer than the outputs; a file restored with its old
    bytes and time restores the stamp's; a touch alone leaves the content, which Snakemake compares for
    small files. Written only when its content or time differs, so parsing the workflow again (every
    cluster job does) changes nothing.
    """
    files = import_closure(entry, scripts)
    root = scripts.parent
    text = "".join(f"{f.relative_to(root)} {_digest(f)}\n" for f in files)
    newest = max(f.stat().st_mtime_ns for f in files)
    stamp = folder / f"{entry}.txt"
    if not stamp.is_file() or stamp.read_text() != text:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = stamp.with_name(f".{stamp.name}.{os.getpid()}")
        tmp.write_text(text)
        os.utime(tmp, ns=(newest, newest))
        os.replace(tmp, stamp)
    elif stamp.stat().st_mtime_ns != newest:
        os.utime(stamp, ns=(newest, newest))
    return str(stamp)
