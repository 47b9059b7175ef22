"""ATLAS acquisition: per-chain archives over HTTP, resumable and checksummed (rule ``atlas_download``).

Archive URL: ``{base_url}/{name}/{name}_{archive}.zip`` (archive ``protein``: 10,000 frames
per replicate at 10 ps; ``analysis``: 1,000 frames at 100 ps). Downloads go to a cache
folder outside the rule's outputs as ``.part`` files and resume with an HTTP Range
request; a finished archive is renamed into place, hashed (sha256) and checked against a
configured checksum and as a zip. From each archive only the topology and the replicate
trajectories are extracted, in either naming (``{name}_prod_R{i}_fit.xtc`` or
``{name}_R{i}.xtc``). A bad chain (HTTP error, corrupt archive, missing replicate) raises
an :class:`InputError` naming the chain and the file, and never leaves a partial folder.

Without network (``source: local``) the same entries are written for a layout on disk.
"""

from __future__ import annotations

import http.client
import logging
import os
import shutil
import time
import urllib.error
import urllib.request
import zipfile
import zlib
from pathlib import Path

from repro.data.atlas.layout import REPLICATE_FILE
from repro.data.atlas.splits import read_split
from repro.io import InputError, atomic_path, write_json
from repro.io import sha256 as sha256_of

log = logging.getLogger(__name__)
ARCHIVES = {"protein": {"frames": 10000, "dt_ps": 10.0}, "analysis": {"frames": 1000, "dt_ps": 100.0}}
LICENCE = "ATLAS (Vander Meersche et al., NAR 2024), CC BY-NC 4.0; split lists from AlphaFlow (MIT)"
BLOCK = 1 << 20


def archive_url(base_url: str, name: str, archive: str) -> str:
    return f"{base_url.rstrip('/')}/{name}/{name}_{archive}.zip"


def _fetch_once(url: str, part: Path, timeout: float) -> None:
    """Append the rest of ``url`` to ``part`` (Range from its size); restart if the server ignores Range."""
    offset = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={offset}-"} if offset else {})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as err:
        if err.code == 416 and offset:
            return
        raise
    with response:
        resumed = offset > 0 and response.status == 206
        length = response.headers.get("Content-Length")
        expected = (int(length) + (offset if resumed else 0)) if length is not None else None
        with open(part, "ab" if resumed else "wb") as handle:
            shutil.copyfileobj(response, handle, BLOCK)
    if expected is not None and part.stat().st_size != expected:
        raise http.client.IncompleteRead(b"", expected - part.stat().st_size)


def download(
    url: str, dest: Path, name: str, timeout: float = 60.0, retries: int = 3, sha256: str | None = None
) -> dict:
    """Download ``url`` to ``dest`` (resuming ``dest.part``); return bytes and sha256.

    Network errors and short reads are retried with back-off; a 4xx answer is not.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    for attempt in range(retries + 1):
        if dest.exists():
            break
        try:
            _fetch_once(url, part, timeout)
            os.replace(part, dest)
        except urllib.error.HTTPError as err:
            if 400 <= err.code < 500:
                raise InputError(url, f"protein {name}: HTTP {err.code} {err.reason}") from err
            log.warning("%s: HTTP %s (attempt %d)", url, err.code, attempt + 1)
        except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError, OSError) as err:
            log.warning("%s: %s (attempt %d)", url, err, attempt + 1)
        if not dest.exists() and attempt < retries:
            time.sleep(min(2**attempt, 30) * 0.1)
    if not dest.exists():
        raise InputError(url, f"protein {name}: download failed after {retries + 1} attempts")
    digest = sha256_of(dest)
    if sha256 is not None and digest != sha256:
        dest.unlink()
        raise InputError(url, f"protein {name}: sha256 {digest} does not match the expected {sha256}")
    return {"url": url, "bytes": dest.stat().st_size, "sha256": digest}


def extract_chain(archive: Path, name: str, replicates: list[int], out_root: Path) -> list[str]:
    """Unpack ``{name}.pdb`` and the wanted replicate trajectories into ``out_root/{name}/`` atomically."""
    try:
        with zipfile.ZipFile(archive) as zf:
            bad = zf.testzip()
            if bad is not None:
                raise InputError(archive, f"protein {name}: corrupt archive member {bad}")
            members = {Path(m).name: m for m in zf.namelist() if not m.endswith("/")}
            wanted = {}
            if f"{name}.pdb" not in members:
                raise InputError(archive, f"protein {name}: archive has no {name}.pdb")
            wanted[f"{name}.pdb"] = members[f"{name}.pdb"]
            found = {}
            for base, member in members.items():
                match = REPLICATE_FILE.match(base)
                if match and match["name"] == name and base.endswith(".xtc"):
                    found[int(match["rep"])] = (base, member)
            for rep in replicates:
                if rep not in found:
                    raise InputError(
                        archive,
                        f"protein {name}: replicate R{rep} missing from the archive "
                        f"(neither {name}_prod_R{rep}_fit.xtc nor {name}_R{rep}.xtc)",
                    )
                wanted[found[rep][0]] = found[rep][1]
            with atomic_path(out_root / name) as tmp:
                tmp.mkdir()
                for base, member in wanted.items():
                    with zf.open(member) as src, open(tmp / base, "wb") as dst:
                        shutil.copyfileobj(src, dst, BLOCK)
            return sorted(wanted)
    except (zipfile.BadZipFile, EOFError, zipfile.LargeZipFile, zlib.error) as err:
        raise InputError(archive, f"protein {name}: not a valid zip archive ({err})") from err


def fetch_chain(
    base_url: str,
    name: str,
    archive: str,
    cache: Path,
    raw: Path,
    replicates: list[int],
    timeout: float,
    retries: int,
    checksums: dict[str, str],
) -> dict:
    """Download and unpack one chain; a corrupt archive is deleted so the next run fetches it again."""
    file_name = f"{name}_{archive}.zip"
    dest = Path(cache) / file_name
    record = download(archive_url(base_url, name, archive), dest, name, timeout, retries, checksums.get(file_name))
    try:
        record["files"] = extract_chain(dest, name, replicates, Path(raw))
    except InputError:
        dest.unlink(missing_ok=True)
        raise
    return record


def chain_lists(section: dict, split_dir: Path) -> dict[str, list[str]]:
    """Split -> chains to fetch: the shipped lists named in ``splits``, plus ``names`` as train.

    The 1,266-chain train list is not shipped; ``train_from`` names a shipped list (e.g. val)
    whose chains then serve as the training set of a reduced full-scale run.
    """
    limit = section.get("limit")
    lists = {split: read_split(split_dir / f"atlas_{split}.csv")[:limit] for split in section.get("splits", [])}
    lists["train"] = list(section.get("names", []))
    if section.get("train_from"):
        lists["train"] += lists.pop(section["train_from"])
    return lists


def entries(lists: dict[str, list[str]], replicates: dict[str, list[int]], archive: str) -> dict:
    return {
        "replicates": replicates,
        "splits": lists,
        "dt_ps": ARCHIVES[archive]["dt_ps"],
        "expected_frames": ARCHIVES[archive]["frames"],
        "licence": LICENCE,
        "origin": None,
    }


def main(job) -> None:
    """Rule entry for ``atlas_download`` (remote) and ``atlas_local`` (a layout on disk)."""
    section = job.params.section
    split_dir = Path(job.input.splits[0]).parent
    if section["source"] == "local":
        local = section["local"]
        lists = chain_lists(local, split_dir)
        reps = local.get("replicates", [1, 2, 3])
        out = entries(lists, {n: reps for names in lists.values() for n in names}, local.get("archive", "protein"))
        out["origin"] = local["root"]
        write_json(job.output.entries, out)
        return
    remote = section["remote"]
    lists = chain_lists(remote, split_dir)
    reps = remote.get("replicates", [1, 2, 3])
    names = list(dict.fromkeys(n for names in lists.values() for n in names))
    records, errors = {}, {}
    with atomic_path(job.output.raw) as tmp:
        tmp.mkdir()
        for name in names:
            try:
                records[name] = fetch_chain(
                    remote["base_url"],
                    name,
                    remote["archive"],
                    Path(job.params.cache),
                    tmp,
                    reps,
                    remote.get("timeout_s", 60),
                    remote.get("retries", 3),
                    remote.get("checksums", {}),
                )
                log.info("%s: %d bytes", name, records[name]["bytes"])
            except InputError as err:
                log.error("%s", err)
                errors[name] = str(err)
        if errors and section["on_error"] == "fail":
            raise InputError(remote["base_url"], "download failed for " + "; ".join(errors.values()))
    kept = {split: [n for n in names_ if n in records] for split, names_ in lists.items()}
    out = entries(kept, {n: reps for n in records}, remote["archive"])
    out.update({"origin": remote["base_url"], "downloads": records, "failed": errors})
    write_json(job.output.entries, out)
