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
import json
import os
import time
from pathlib import Path

PACKAGE = "repro"
SCRIPTS = Path(__file__).resolve().parents[2]


@functools.cache
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


def imported_modules(path: Path, scripts: Path = SCRIPTS, source: bytes | None = None) -> set[str]:
    """Dotted names of the repro modules ``path`` imports (``from a import b`` also yields ``a.b``)."""
    tree = ast.parse(path.read_bytes() if source is None else source, filename=str(path))
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


# What a parse of the workflow learnt about each source file, kept between parses in FACTS_FILE (under the
# stamps' folder): {path: [mtime_ns, size, sha256, imported repro modules]}. Reading ~460 files with ast is most
# of a parse's CPU otherwise (4 of 6 CPU-s here), and every cluster job parses the workflow twice. An entry is
# used only while the file's mtime and size are those recorded; a file changed within FRESH_S of the parse
# that records it is not recorded (its mtime could repeat with other bytes), so it is read again next time.
FACTS_FILE = "closure-facts.json"
FRESH_S = 2.0
_known: dict[str, list] = {}
_recorded: dict[str, list] = {}


def load_facts(folder: Path) -> None:
    """Read the facts an earlier parse recorded in ``folder`` (nothing when there are none, or unreadable)."""
    try:
        _known.update(json.loads((folder / FACTS_FILE).read_text()))
    except (OSError, ValueError):
        pass


def save_facts(folder: Path) -> None:
    """Record what this process learnt, when that is anything new (atomically: parses run concurrently)."""
    if not _recorded:
        return
    _known.update(_recorded)
    _recorded.clear()
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{FACTS_FILE}.{os.getpid()}"
    tmp.write_text(json.dumps(_known, separators=(",", ":")))
    os.replace(tmp, folder / FACTS_FILE)


@functools.cache
def _facts(path: Path, scripts: Path) -> tuple[int, str, frozenset[str]]:
    """(mtime_ns, sha256, imported repro modules) of one source file, once per process."""
    st = path.stat()
    known = _known.get(str(path))
    if known and known[0] == st.st_mtime_ns and known[1] == st.st_size:
        return known[0], known[2], frozenset(known[3])
    source = path.read_bytes()
    digest = hashlib.sha256(source).hexdigest()
    imports = frozenset(imported_modules(path, scripts, source))
    if time.time_ns() - st.st_mtime_ns > FRESH_S * 1e9:
        _recorded[str(path)] = [st.st_mtime_ns, st.st_size, digest, sorted(imports)]
    return st.st_mtime_ns, digest, imports


def _imports(path: Path, scripts: Path) -> frozenset[str]:
    """:func:`imported_modules`, parsed once per file (every stage's closure shares repro's core)."""
    return _facts(path, scripts)[2]


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
    if not _known:
        load_facts(folder)
    files = import_closure(entry, scripts)
    root = scripts.parent
    text = "".join(f"{f.relative_to(root)} {_facts(f, scripts)[1]}\n" for f in files)
    newest = max(_facts(f, scripts)[0] for f in files)
    save_facts(folder)
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
