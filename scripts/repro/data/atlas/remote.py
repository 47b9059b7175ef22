"""ATLAS acquisition: per-chain archives over HTTP, resumable and checksummed (rule ``atlas_download``).

Archive URL: ``{base_url}/{name}/{name}_{archive}.zip`` (archive ``protein``: 10,000 frames
per replicate at 10 ps; ``analysis``: 1,000 frames at 100 ps). Downloads go to a cache
folder outside the rule's outputs, through the shared downloader (repro.workflow.download: resumed with an
HTTP Range request, hashed and checked against a configured checksum before it is renamed into
place), and checked as a zip. From each archive only the topology and the replicate
trajectories are extracted, in either naming (``{name}_prod_R{i}_fit.xtc`` or
``{name}_R{i}.xtc``). A bad chain (HTTP error, corrupt archive, missing replicate) raises
an :class:`InputError` naming the chain and the file, and never leaves a partial folder.

Without network (``source: local``) the same entries are written for a layout on disk.
"""

from __future__ import annotations

import logging
import shutil
import zipfile
import zlib
from pathlib import Path

from repro.data.atlas.layout import REPLICATE_FILE
from repro.data.atlas.splits import read_split
from repro.workflow.download import download as fetch
from repro.workflow.io import InputError, atomic_path, write_json

log = logging.getLogger(__name__)
ARCHIVES = {"protein": {"frames": 10000, "dt_ps": 10.0}, "analysis": {"frames": 1000, "dt_ps": 100.0}}
LICENCE = "ATLAS (Vander Meersche et al., NAR 2024), CC BY-NC 4.0; split lists from AlphaFlow (MIT)"
BLOCK = 1 << 20


def archive_url(base_url: str, name: str, archive: str) -> str:
    return f"{base_url.rstrip('/')}/{name}/{name}_{archive}.zip"


def download(
    url: str, dest: Path, name: str, timeout: float = 60.0, retries: int = 3, sha256: str | None = None
) -> dict:
    """Download ``url`` to ``dest`` through repro.workflow.download (resumable, sha256 checked before the move).

    Network errors and short reads are retried with back-off; a 4xx answer is not. Errors name the protein.
    """
    try:
        record = fetch(url, dest, sha256_expected=sha256, timeout=timeout, retries=retries, backoff=0.1)
    except InputError as err:
        raise InputError(url, f"protein {name}: {err.problem}") from err
    return {"url": url, "bytes": record["bytes"], "sha256": record["sha256"]}


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
