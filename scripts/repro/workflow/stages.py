"""The declaration of one paper stage, as a paper's rule file writes it (see workflow/rules/common.smk).

Kept in Python, not in a .smk file, because Snakemake's parser reads keywords such as ``input:`` at
the start of a line as rule directives.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# What a stage gets when its paper's config names no resources for it (smoke scale: tiny jobs).
DEFAULT_RESOURCES = {"threads": 1, "mem_mb": 2000, "runtime": 30, "gpu": 0}
# Keys of a paper section that configure the workflow, not a stage's computation.
WORKFLOW_KEYS = ("enabled", "resources", "data", "jobs")
# Conda envs whose code can run on a GPU; a stage in any other env never asks for one.
GPU_ENVS = ("torch",)


@dataclass
class Stage:
    """One rule of a paper, as its rule file declares it (see ``stage``)."""

    name: str
    output: dict
    input: dict = field(default_factory=dict)
    entry: str | None = None
    env: str = "core"
    settings: list | None = None
    seed: bool = False
    resources: str | None = None
    params: dict = field(default_factory=dict)
    reported: bool = False
    localrule: bool = False
    constraints: dict = field(default_factory=dict)
    cache: bool | str = False


def stage_resources(section: Mapping[str, Any], key: str) -> tuple[int, dict[str, Any]]:
    """(threads, resources) of one stage from ``section['resources'][key]`` over the defaults.

    Memory and runtime grow with the attempt (a retried cluster job gets more); ``gpu`` is set
    only when the config asks for one, so CPU stages never land on a GPU partition.
    """
    res = DEFAULT_RESOURCES | dict(section.get("resources", {}).get(key, {}))
    resources: dict[str, Any] = {
        "mem_mb": _per_attempt(res["mem_mb"]),
        "runtime": _per_attempt(res["runtime"]),
    }
    if res["gpu"]:
        resources["gpu"] = res["gpu"]
    return res["threads"], resources


def _per_attempt(base: int) -> Callable[..., int]:
    def scaled(wildcards, attempt: int) -> int:
        return base * attempt

    return scaled


def check_gpu_env(rule: str, env: str, resources: Mapping[str, Any]) -> None:
    """Refuse a GPU for a stage whose env cannot use one (a numpy stage would hold a GPU node idle)."""
    if resources.get("gpu") and env not in GPU_ENVS:
        raise ValueError(
            f"rule {rule}: config asks for gpu={resources['gpu']} but its env {env!r} runs no GPU code; "
            f"drop `gpu` from its resources block or declare the stage with env='torch'"
        )


def select_settings(section: Mapping[str, Any], keys: list[str] | None) -> dict[str, Any]:
    """The config keys a stage reads (all computational keys when it names none)."""
    if keys is None:
        return {k: v for k, v in section.items() if k not in WORKFLOW_KEYS}
    missing = [k for k in keys if k not in section]
    if missing:
        raise ValueError(f"stage reads config keys {missing} its paper section lacks")
    return {k: section[k] for k in keys}


def job_groups(
    section: Mapping[str, Any],
    stage: str,
    runs: Sequence[tuple[str, ...]],
    key: Callable[[tuple[str, ...]], tuple[str, ...]] = lambda run: (),
) -> dict[str, list[tuple[str, ...]]]:
    """The jobs of a stage with several runs (variants, methods, models): ``{name suffix: runs of that job}``.

    ``section['jobs'][stage]`` is ``per_run`` (the default: each run its own job, named by its parts) or
    ``grouped`` (the runs sharing ``key`` share one job, named by the key). Why both: every job pays an
    interpreter start and its imports (``import torch`` alone is about 2 CPU-seconds here) whatever it
    computes, so the smoke default, whose trainings take seconds, groups them; at full scale each run
    takes hours on its own GPU and gets its own job.
    """
    if section.get("jobs", {}).get(stage, "per_run") == "per_run":
        return {"_".join(run): [tuple(run)] for run in runs}
    groups: dict[Hashable, list[tuple[str, ...]]] = {}
    for run in runs:
        groups.setdefault(key(tuple(run)), []).append(tuple(run))
    return {"_".join(k): v for k, v in groups.items()}


def stage_name(stage: str, suffix: str) -> str:
    """``train`` for the one job of a fully grouped stage, ``train_<suffix>`` otherwise."""
    return f"{stage}_{suffix}" if suffix else stage


# What makes a stage small enough to share its paper's cluster job (config key `cluster.small_stage`).
SMALL_STAGE = {"threads": 1, "mem_mb": 4000, "runtime": 30}


def is_small(resources: Mapping[str, Any], limits: Mapping[str, Any]) -> bool:
    """A stage asking no GPU and at most ``limits``' threads, memory (MB) and runtime (minutes)."""
    res = DEFAULT_RESOURCES | dict(resources)
    return not res["gpu"] and all(res[k] <= limits[k] for k in ("threads", "mem_mb", "runtime"))


def _pattern(path: str) -> re.Pattern[str]:
    """A regex matching every file an output path with wildcards ({name} or {name,regex}) can name."""
    parts = re.split(r"\{[^{}]*\}", path)
    return re.compile(".+".join(map(re.escape, parts)) + r"\Z")


def cluster_groups(
    slug: str,
    outputs: Mapping[str, Sequence[str]],
    inputs: Mapping[str, Sequence[Any]],
    small: Mapping[str, bool],
) -> dict[str, str | None]:
    """The Snakemake ``group`` of each stage of one paper (None: the stage is its own cluster job).

    Every cluster job starts Snakemake twice, each start parsing the workflow before its few seconds of work, so
    a paper's small stages share one job. A group must never be left and entered again (Snakemake refuses
    a group that depends on itself: prepare -> train -> evaluate, evaluate also reading prepare), so a small
    stage goes to the group of its *phase*: the most heavy stages on any path of the paper's stages leading
    to it. A path can only stay in a phase or go to a later one. ``inputs`` are a stage's input paths (a
    wildcard in one matches anything; a stage with a callable input is taken to depend on every stage declared
    before it).
    """
    patterns = {name: [_pattern(p) for p in outs] for name, outs in outputs.items()}

    def concrete(path: str) -> str:
        return re.sub(r"\{[^{}]*\}", "x", path)

    deps: dict[str, set[str]] = {}
    order = list(outputs)
    for name, ins in inputs.items():
        if any(callable(i) for i in ins):
            deps[name] = set(order[: order.index(name)])
            continue
        paths = [concrete(str(i)) for i in ins]
        deps[name] = {
            other
            for other, pats in patterns.items()
            if other != name and any(p.match(path) for p in pats for path in paths)
        }
    phase: dict[str, int] = {}

    def phase_of(name: str, seen: tuple[str, ...] = ()) -> int:
        # the heavy stages on the heaviest path into `name`, `name` included
        if name not in phase:
            if name in seen:
                raise ValueError(f"{slug}: stages {' -> '.join(seen + (name,))} form a cycle")
            ups = [phase_of(d, seen + (name,)) for d in deps.get(name, ())]
            phase[name] = max(ups, default=0) + (0 if small[name] else 1)
        return phase[name]

    tag = slug.replace("-", "_")
    return {name: f"{tag}_small{phase_of(name)}" if small[name] else None for name in outputs}
