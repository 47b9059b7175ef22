"""Helpers shared by the workflow-level tests (slurm, envs, reruns, resume); no tests of its own.

Every run happens in a copy of the checkout under the test's tmp_path, so tests never write into
the repository's own results/, data/ or logs/. Every snakemake call is bounded by
``timeout -s KILL`` (the Slurm executor ignores SIGTERM while it polls a broken ``sacct``).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import math
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
# Top-level folders that hold generated files (the .gitignore patterns also match nested
# folders such as scripts/repro/data/, which are code and must be copied).
GENERATED = {".git", ".snakemake", "results", "data", "logs", ".venv", ".pytest_cache", "report.html"}


def copy_tree(dst: Path) -> Path:
    """Copy the checkout (code, config, profiles; no generated files) to ``dst``."""

    def ignore(folder: str, names: list[str]) -> set[str]:
        skip = {n for n in names if n in {"__pycache__", ".pytest_cache"}}
        if Path(folder).resolve() == REPO:
            skip |= GENERATED & set(names)
        return skip

    shutil.copytree(REPO, dst, ignore=ignore, symlinks=True)
    return dst


def snakemake(cwd: Path, *args: str, timeout: int = 600, check: bool = True) -> subprocess.CompletedProcess:
    """Run snakemake (this interpreter's) in ``cwd``, killed after ``timeout`` seconds."""
    cmd = ["timeout", "-s", "KILL", str(timeout), sys.executable, "-m", "snakemake", *args]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if proc.returncode == 137:
        raise AssertionError(f"snakemake {' '.join(args)} killed after {timeout} s\n{proc.stderr[-4000:]}")
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed ({proc.returncode})\n{proc.stderr[-6000:]}")
    return proc


@dataclass
class PlannedJob:
    """One job of a dry run: rule, wildcards, outputs and resources (at attempt 1)."""

    rule: str
    wildcards: dict[str, str] = field(default_factory=dict)
    output: list[str] = field(default_factory=list)
    input: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    resources: dict[str, str] = field(default_factory=dict)
    threads: int = 1

    def key(self) -> tuple[str, tuple[str, ...]]:
        return self.rule, tuple(sorted(self.output))


def _pairs(text: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in text.split(", ") if "=" in item)


def parse_dry_run(text: str) -> list[PlannedJob]:
    """Jobs listed by ``snakemake -n`` (its per-job blocks: ``rule X:``, ``output:``, ``resources:``; a job of
    a group job is listed in the group's block, indented four more spaces)."""
    jobs: list[PlannedJob] = []
    for line in text.splitlines():
        head = re.match(r"^(?: {4})?(?:local)?(?:rule|checkpoint) (\w+):$", line)
        if head:
            jobs.append(PlannedJob(head.group(1)))
            continue
        field_ = re.match(r"^ {4}(?: {4})?(\w+): (.*)$", line)
        if not field_ or not jobs:
            continue
        name, value = field_.groups()
        if name == "wildcards":
            jobs[-1].wildcards = _pairs(value)
        elif name == "resources":
            jobs[-1].resources = _pairs(value)
        elif name in ("output", "input", "log"):
            setattr(jobs[-1], name, value.split(", "))
        elif name == "threads":
            jobs[-1].threads = int(value)
    return jobs


def planned_jobs(cwd: Path, *args: str) -> list[PlannedJob]:
    """The jobs ``snakemake -n ARGS`` would run in ``cwd``."""
    proc = snakemake(cwd, "-n", *args, timeout=300)
    return parse_dry_run(proc.stdout + proc.stderr)


# Smoke-scale stages run on CPUs; this overlay gives TALDA's optimisation stage (resources key `train`) a GPU
# so that the Slurm tests see one GPU job placed on a GPU partition of the test cluster (its fake GPUs).
# A torch stage (only those may ask for a GPU) small enough for the test cluster: one P-VAE of poisson-eat.
GPU_OVERLAY = {"papers": {"poisson-eat": {"resources": {"train": {"gpu": 1}}}}}
GPU_TARGET = "results/poisson-eat/runs/gsm.json"
GPU_RULE = "poisson_eat_train"


def write_gpu_overlay(root: Path) -> Path:
    """Write :data:`GPU_OVERLAY` as ``root/gpu_overlay.yaml`` (a ``--configfile`` over the embedded default)."""
    path = root / "gpu_overlay.yaml"
    path.write_text(yaml.safe_dump(GPU_OVERLAY))
    return path


def embedded_config(root: Path = REPO) -> dict[str, Any]:
    return yaml.safe_load((root / "config/config.yaml").read_text())


def paper_rules(root: Path = REPO) -> list[str]:
    """Target rules of the papers enabled in the embedded default (rule names use _ for -)."""
    papers = embedded_config(root)["papers"]
    return [slug.replace("-", "_") for slug, section in papers.items() if section.get("enabled", True)]


def cluster_problem() -> str | None:
    """Why no Slurm cluster is usable here (None when sbatch exists and sinfo answers)."""
    if shutil.which("sbatch") is None or shutil.which("sinfo") is None:
        return "sbatch/sinfo not installed (bring up the test cluster with cluster/install and cluster/up)"
    try:
        proc = subprocess.run(["sinfo", "-h", "-o", "%P %t"], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return "sinfo did not answer within 20 s"
    if proc.returncode != 0:
        return f"sinfo failed: {proc.stderr.strip()[:200]} (run cluster/up)"
    return None


@contextlib.contextmanager
def loaded_workflow(root: Path, cli_args: list[str]) -> Iterator[tuple[Any, argparse.Namespace]]:
    """Parse the workflow in ``root`` in-process with the settings the CLI derives from ``cli_args``.

    Going through snakemake's own argument parser means profiles (``--profile slurm`` and the
    auto-loaded workflow profile) and ``--configfile`` overlays are applied exactly as on the command line. Yields the
    snakemake ``Workflow`` object and the parsed arguments, with ``root`` as working directory.
    """
    from snakemake.api import SnakemakeApi
    from snakemake.cli import parse_args
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings, WorkflowSettings

    with in_dir(root):
        _, args = parse_args(cli_args)
        settings = ResourceSettings(  # as snakemake.cli builds them from the parsed arguments
            cores=args.cores,
            nodes=args.jobs,
            resources=args.resources,
            overwrite_resource_scopes=args.set_resource_scopes,
            default_resources=args.default_resources,
            overwrite_resources=args.set_resources,
        )
        configs = ConfigSettings(configfiles=[Path(f).resolve() for f in args.configfile or []])
        with SnakemakeApi(OutputSettings()) as api:
            workflow = api.workflow(
                resource_settings=settings,
                config_settings=configs,
                workflow_settings=WorkflowSettings(cache=args.cache),
                snakefile=root / "Snakefile",
                workdir=root,
            )
            yield workflow._workflow, args


class in_dir:
    """Context manager: chdir into a folder and back (snakemake resolves profiles from the cwd)."""

    def __init__(self, path: Path):
        self.path, self.old = path, None

    def __enter__(self):
        self.old = Path.cwd()
        os.chdir(self.path)
        return self.path

    def __exit__(self, *exc):
        os.chdir(self.old)


def _optional(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Import inside ``try: ... except ImportError`` or ``with suppress(ImportError)``: optional."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.Try) and any(
            h.type is not None
            and "ImportError" in ast.unparse(h.type)
            or h.type is not None
            and "ModuleNotFoundError" in ast.unparse(h.type)
            for h in node.handlers
        ):
            return True
        if isinstance(node, ast.With) and any("ImportError" in ast.unparse(i.context_expr) for i in node.items):
            return True
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def module_imports(path: Path) -> set[str]:
    """Absolute module names a Python file imports unconditionally (static parse, nothing executed)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    names: set[str] = set()
    for node in ast.walk(tree):
        if _optional(node, parents):
            continue
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def repro_module_file(name: str, scripts: Path) -> Path | None:
    """File of a ``repro.*`` module or package under ``scripts/`` (None for names that are not modules)."""
    base = scripts.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def third_party_imports(files: list[Path], scripts: Path) -> dict[str, set[Path]]:
    """Top-level third-party modules imported by ``files`` and, transitively, the repro modules they use.

    Returns {top-level module: files importing it}; standard-library modules are left out.
    """
    found: dict[str, set[Path]] = {}
    todo, seen = list(files), set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in module_imports(path):
            top = name.split(".")[0]
            if top == "repro":
                parts = name.split(".")
                for i in range(2, len(parts) + 1):
                    target = repro_module_file(".".join(parts[:i]), scripts)
                    if target is not None:
                        todo.append(target)
            elif top not in sys.stdlib_module_names and top != "__future__":
                found.setdefault(top, set()).add(path)
    return found


# Keys that hold measurements of a run (wall times in seconds, e.g. `dense_s`, and speed-ups measured
# from them), not its results: left out when two runs are compared.
TIMING = re.compile(r"seconds|elapsed|duration|wall|_s$|speedup")


def result_differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Paths where two JSON-like results differ, ignoring timing keys (empty when equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = {k for k in a.keys() | b.keys() if not TIMING.search(str(k))}
        return [d for k in sorted(keys, key=str) for d in result_differences(a.get(k), b.get(k), f"{where}/{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in result_differences(x, y, f"{where}[{i}]")]
    both_nan = isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    return [] if a == b or both_nan else [f"{where}: {a!r} != {b!r}"]
