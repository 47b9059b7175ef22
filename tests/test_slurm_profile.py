"""The slurm profile, checked without a cluster: found as typed, partitions, retries, local rules.

Resources are evaluated by snakemake itself (the workflow parsed in-process with the arguments
`--profile slurm` yields) and partitions are chosen by the Slurm executor plugin's own
auto-selection over slurm/partitions.yaml, so the checks see what a cluster run would submit.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from test_slurm_harness import (
    GPU_RULE,
    GPU_TARGET,
    REPO,
    copy_tree,
    loaded_workflow,
    module_imports,
    planned_jobs,
    repro_module_file,
    snakemake,
    third_party_imports,
    write_gpu_overlay,
)

PROFILE = REPO / "slurm"
# Imports that only make sense with internet access: rules using them must run on the submit host.
NETWORK_CLIENTS = {"requests", "urllib3", "httpx", "aiohttp", "cdsapi", "gcsfs", "s3fs", "ftplib", "http", "boto3"}
NETWORK_SUBMODULES = {"urllib.request", "http.client"}
ACQUISITION_NAME = re.compile(r"download|fetch|acquire")
WORKFLOW_PROFILE_DIRS = ("profiles/default", "workflow/profiles/default")


class _Resources(dict):
    """What the plugin reads from ``job.resources``: ``get`` and attribute access."""

    def __getattr__(self, name):
        return self.get(name)


def _profile(path: Path) -> dict:
    for name in ("config.v8+.yaml", "config.yaml"):
        if (path / name).exists():
            return yaml.safe_load((path / name).read_text()) or {}
    return {}


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return copy_tree(tmp_path_factory.mktemp("profile") / "repo")


@pytest.fixture(scope="module")
def jobs(tree):
    """Every job of the embedded default (forced, so all are listed), with rule and wildcards."""
    return planned_jobs(tree, "--forceall", "--cores", "1", "all")


def _submitted(tree: Path, jobs, extra: list[str]) -> list:
    """(job, resources at attempts 1..3, partition chosen by the plugin) of every job sent to Slurm."""
    from snakemake_executor_plugin_slurm.partitions import get_best_partition, read_partition_file

    partitions = read_partition_file(PROFILE / "partitions.yaml")
    out = []
    with loaded_workflow(tree, ["--profile", "slurm", *extra]) as (workflow, _):
        local = {r.name for r in workflow.rules if r.norun or r.name in workflow._localrules}
        for job in jobs:
            if job.rule in local:
                continue
            rule = workflow.get_rule(job.rule)
            per_attempt = [dict(rule.expand_resources(job.wildcards, [], attempt)) for attempt in (1, 2, 3)]
            res = _Resources(per_attempt[0])
            fake = SimpleNamespace(name=job.rule, threads=int(res.get("_cores", 1)), resources=res)
            logger = SimpleNamespace(info=lambda *a: None, debug=lambda *a: None, warning=lambda *a: None)
            out.append((job, per_attempt, get_best_partition(partitions, fake, logger)))
    assert out, "no job of the embedded default would be submitted to Slurm"
    return out


@pytest.fixture(scope="module")
def submitted(tree, jobs):
    return _submitted(tree, jobs, [])


@pytest.fixture(scope="module")
def submitted_with_gpu(tree):
    """The TALDA jobs with the GPU overlay (its optimisation stage asks for a GPU)."""
    overlay = write_gpu_overlay(tree)
    jobs = planned_jobs(tree, "--forceall", "--cores", "1", "talda", GPU_TARGET, "--configfile", str(overlay))
    return _submitted(tree, jobs, ["--configfile", str(overlay)])


def test_profile_is_found_as_typed_from_the_repo_root(tree):
    """`snakemake --profile slurm` resolves ./slurm (snakemake never looks in ./profiles/slurm)."""
    with loaded_workflow(tree, ["--profile", "slurm"]) as (_, args):
        assert args.executor == "slurm"
        assert Path(args.slurm_partition_config).resolve() == (tree / "slurm/partitions.yaml").resolve()


def test_gpu_jobs_go_to_a_gpu_partition_and_the_rest_to_cpu(submitted, submitted_with_gpu):
    """A job asking for a GPU (config `resources: {<stage>: {gpu: N}}`, as config/full.yaml does for stages that
    train on a GPU) lands on a partition with GPUs; every other job on a CPU partition."""
    gpu_partitions = {
        name
        for name, p in yaml.safe_load((PROFILE / "partitions.yaml").read_text())["partitions"].items()
        if (p or {}).get("max_gpu", 0) > 0
    }
    assert gpu_partitions, "slurm/partitions.yaml declares no partition with GPUs"
    gpu_jobs = 0
    for job, per_attempt, partition in submitted + submitted_with_gpu:
        gpus = int(per_attempt[0].get("gpu", 0))
        gpu_jobs += gpus > 0
        if gpus > 0:
            assert partition in gpu_partitions, f"{job.rule} {job.wildcards}: gpu={gpus} but partition {partition}"
        else:
            assert partition is not None and partition not in gpu_partitions, f"{job.rule}: CPU job sent to {partition}"
    assert any(int(r[0].get("gpu", 0)) for job, r, _ in submitted_with_gpu if job.rule == GPU_RULE)
    assert gpu_jobs >= 1


def test_memory_and_runtime_grow_with_each_retry(tree, submitted):
    """On a retry (after OOM or timeout) a job asks for more memory and time than before."""
    with loaded_workflow(tree, ["--profile", "slurm"]) as (_, args):
        assert args.retries >= 1, "slurm profile must retry failed jobs"
    for job, per_attempt, _ in submitted:
        mem = [int(r["mem_mb"]) for r in per_attempt]
        runtime = [int(r["runtime"]) for r in per_attempt]
        assert mem[0] < mem[1] < mem[2], (
            f"{job.rule}: mem_mb {mem} over attempts 1-3; declare the rule's resources with "
            f"stage_resources (workflow/rules/common.smk), which scales them by the attempt"
        )
        assert runtime[0] < runtime[1] < runtime[2], f"{job.rule}: runtime {runtime} over attempts 1-3"


def test_workflow_profile_never_replaces_a_slurm_profile_key(tree, tmp_path):
    """Snakemake auto-loads profiles/default as workflow profile; it replaces whole top-level keys."""
    slurm_keys = set(_profile(PROFILE))
    for folder in WORKFLOW_PROFILE_DIRS:
        overlap = slurm_keys & set(_profile(REPO / folder))
        assert not overlap, f"{folder} sets {sorted(overlap)}, which would replace the slurm profile's values"
    # Behaviour, not only key names: the arguments snakemake derives are those of the slurm profile
    # alone, whatever workflow profile the checkout carries.
    bare = copy_tree(tmp_path / "bare")
    for folder in WORKFLOW_PROFILE_DIRS:
        if (bare / folder).exists():
            for f in (bare / folder).iterdir():
                f.unlink()
            (bare / folder).rmdir()
    with loaded_workflow(tree, ["--profile", "slurm"]) as (_, with_default):
        real = {k: str(getattr(with_default, k.replace("-", "_"), None)) for k in slurm_keys}
    with loaded_workflow(bare, ["--profile", "slurm"]) as (_, alone):
        expected = {k: str(getattr(alone, k.replace("-", "_"), None)) for k in slurm_keys}

    def normalise(d):
        return {k: v.replace(str(bare), "ROOT").replace(str(tree), "ROOT") for k, v in d.items()}

    assert normalise(real) == normalise(expected)


def _group_request(workflow, width: int) -> dict:
    """What Snakemake asks Slurm for a group of ``width`` one-thread stages that could all run at once (four
    seeds' training of one paper, say), with the loaded workflow's resource constraints."""
    from snakemake.resources import GroupResources

    stage = SimpleNamespace(resources={"_cores": 1, "group_threads": 1, "mem_mb": 2000, "runtime": 30}, pipe_group=None)
    return GroupResources.basic_layered(
        toposorted_jobs=[[stage] * width],
        constraints=workflow.global_resources,
        run_local=False,
        additive_resources=["runtime"],
        sortby=["runtime"],
    )


def test_a_group_job_never_asks_more_cpus_than_the_profile_allows(tree, submitted):
    """Snakemake sums the threads of a group's stages that could run at once, so a group of five parallel
    one-thread stages asked 5 CPUs and pended for ever on the test cluster's 2-CPU node (the first 35-paper run
    through it). Every grouped stage counts its threads as ``group_threads``; the slurm profile caps that per
    group job (local scope: the stages beyond the cap run in series, their runtimes added), within every
    partition's CPUs."""
    for job, per_attempt, _ in submitted:
        if "group_threads" in per_attempt[0]:
            assert per_attempt[0]["group_threads"] == per_attempt[0]["_cores"], job.rule
    assert any("group_threads" in r[0] for _, r, _ in submitted), "no grouped stage declares group_threads"
    with loaded_workflow(tree, ["--profile", "slurm"]) as (workflow, args):
        cap = workflow.global_resources.get("group_threads").value
        assert workflow.resource_scopes.is_local("group_threads")
        request = _group_request(workflow, 5)
    partitions = yaml.safe_load((PROFILE / "partitions.yaml").read_text())["partitions"]
    assert cap <= min(p["max_threads"] for p in partitions.values())
    assert request["_cores"] == cap and request["runtime"] == 30 * -(-5 // cap)
    with loaded_workflow(tree, ["--profile", "slurm", "--resources", "group_threads=99"]) as (workflow, _):
        assert _group_request(workflow, 5)["_cores"] == 5  # without a binding cap: the whole layer at once


def test_a_cluster_jobs_snakemake_parses_only_the_papers_its_rules_belong_to(tree):
    """Each cluster job's Snakemake (--mode remote) includes the rule files of the papers named by its
    --allowed-rules only. For every job the profile would submit (each group, each ungrouped stage and data
    rule), the papers chosen from its rule names are exactly the papers that declared those stages."""
    from repro.workflow.config import papers_of_cluster_job

    with loaded_workflow(tree, ["--profile", "slurm"]) as (workflow, _):
        papers = workflow.globals["PAPERS"]
        owner = {
            f"{slug.replace('-', '_')}_{st.name}": slug
            for slug, stages in workflow.globals["PAPER_STAGES"].items()
            for st in stages
        }
        local = {r.name for r in workflow.rules if r.norun or r.name in workflow._localrules}
        jobs: dict[str, list[str]] = {}
        for rule in workflow.rules:
            if rule.name not in local:
                jobs.setdefault(rule._group or rule.name, []).append(rule.name)
    assert len(jobs) > len(papers), "the embedded default submits fewer jobs than it has papers"
    # the embedded ATLAS source's two steps start biodynaspec's chain: one job, one wait in the queue
    assert sorted(jobs["atlas_embedded"]) == ["atlas_data", "atlas_embedded"]
    for rules in jobs.values():
        argv = ["--target-jobs", f"{rules[0]}:", "--allowed-rules", *rules, "--local-groupid", "7", "--cores", "1"]
        assert papers_of_cluster_job(papers, argv) == sorted({owner[r] for r in rules if r in owner}, key=papers.index)
    assert papers_of_cluster_job(papers, ["--cores", "1"]) == papers, "without --allowed-rules: every paper"
    assert papers_of_cluster_job(["a", "a-b"], ["--allowed-rules", "a_b_train"]) == ["a", "a-b"], "ambiguous: both"
    listed = snakemake(tree, "--mode", "remote", "--allowed-rules", "talda_data", "talda_evaluate", "--list-rules")
    names = set(listed.stdout.split())
    assert {"talda", "talda_data", "talda_figures"} <= names and not any(r.startswith("lwe") for r in names)


def test_workflow_profile_is_loaded_and_keeps_the_engine_off_a_one_second_loop(tree):
    """Snakemake finds a workflow profile only as profiles/default beside the Snakefile (one under workflow/ is
    silently ignored for a top-level Snakefile, as a first version of this profile was). Its settings reach a
    local run: the greedy scheduler (no CBC solver per scheduling pass) and a rate limit whose timespan is a
    minute, since Snakemake re-runs the pass, stat-ing every ready job's inputs, once per timespan."""
    assert not (tree / "workflow/profiles/default").exists(), "Snakemake does not look there for this Snakefile"
    with loaded_workflow(tree, ["--cores", "2"]) as (_, args):
        assert args.scheduler == "greedy"
        assert args.max_jobs_per_timespan.timespan >= 60
        assert args.max_jobs_per_timespan.max_jobs >= 1000  # never binds for this workflow's few hundred jobs
    with loaded_workflow(tree, ["--cores", "2", "--workflow-profile", "none"]) as (_, args):
        assert args.scheduler == "ilp" and args.max_jobs_per_timespan.timespan == 1  # Snakemake's own defaults


def _network_imports(files: list[Path], scripts: Path) -> set[str]:
    found = set(third_party_imports(files, scripts)) & NETWORK_CLIENTS
    for f in files:
        found |= module_imports(f) & NETWORK_SUBMODULES
    return found


def test_network_detector_sees_clients(tmp_path):
    """The acquisition detector below flags a module that talks HTTP and passes a pure one."""
    (tmp_path / "fetch.py").write_text("import urllib.request\nfrom aiohttp import ClientSession\n")
    (tmp_path / "pure.py").write_text("import json\ntry:\n    import requests\nexcept ImportError:\n    pass\n")
    assert _network_imports([tmp_path / "fetch.py"], tmp_path) == {"aiohttp", "urllib.request"}
    assert _network_imports([tmp_path / "pure.py"], tmp_path) == set()


def test_acquisition_rules_run_on_the_submit_host(tree):
    """A rule that downloads (network client imported, or named so) is a localrule: compute nodes may be offline."""
    scripts = tree / "scripts"
    with loaded_workflow(tree, ["--profile", "slurm"]) as (workflow, _):
        for rule in workflow.rules:
            entry = rule.params.get("entry") if hasattr(rule.params, "get") else None
            files = [Path(f) for f in rule.input if isinstance(f, str) and f.endswith(".py")]
            if isinstance(entry, str):
                module = repro_module_file(entry, scripts)
                files += [module] if module else []
            network = _network_imports([tree / f if not f.is_absolute() else f for f in files], scripts)
            if network or ACQUISITION_NAME.search(rule.name):
                assert rule.name in workflow._localrules, (
                    f"rule {rule.name} acquires data ({sorted(network) or 'by name'}) but is not a localrule; "
                    f"add `localrule: True` to it"
                )
