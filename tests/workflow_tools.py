"""Helpers for tests that run Snakemake on a copy of the workflow (never in the repo's own results/)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKIP = {
    ".git",
    ".venv",
    "results",
    "data",
    "logs",
    ".snakemake",
    ".pytest_cache",
    "__pycache__",
    "tests",
    "benchmarks",
    ".ci-cache",
}


def copy_workflow(dest: Path) -> Path:
    """Copy the workflow (code, config, resources, envs, profiles) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for item in REPO.iterdir():
        if item.name in SKIP or item.name.endswith(".egg-info"):
            continue
        target = dest / item.name
        if item.is_dir():
            shutil.copytree(item, target, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(item, target)
    return dest


def place_user_data(root: Path, *overlays: str) -> list[str]:
    """Empty stand-ins for every user file and folder the config (default plus ``overlays``) names, so
    that a dry run at paper scale can plan the DAG (a missing user path stops it, naming the file)."""
    from repro.workflow.config import load_config
    from repro.workflow.schema_keys import user_paths

    config = load_config(*overlays)
    placed = []
    for group in ("papers", "data"):
        for name, section in config[group].items():
            for _, kind, path in user_paths(section, (group, name)):
                target = root / path
                if kind == "folder":
                    target.mkdir(parents=True, exist_ok=True)
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.touch()
                placed.append(path)
    return placed


def commit_copy(root: Path) -> str:
    """Make the copy at ``root`` a git repository with one commit (provenance records it); return the hash."""
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    return subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()


def snakemake(workdir: Path, *args: str, timeout: int = 1800, check: bool = True) -> subprocess.CompletedProcess:
    """Run snakemake in ``workdir`` with this interpreter's environment."""
    cmd = [sys.executable, "-m", "snakemake", *args]
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}"
        )
    return proc


def scheduled_rules(workdir: Path, *args: str) -> dict[str, int]:
    """Rules (with job counts) a dry-run would execute."""
    out = snakemake(workdir, "-n", *args).stdout
    stats = out.split("Job stats:", 1)
    if len(stats) < 2:
        return {}
    table = stats[1].split("\n\n", 1)[0]
    jobs = {}
    for line in table.splitlines():
        match = re.match(r"^(\S+)\s+(\d+)$", line.strip())
        if match and match.group(1) != "total":
            jobs[match.group(1)] = int(match.group(2))
    return jobs
