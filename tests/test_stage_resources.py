"""Resources in one place: every declared stage gets threads, mem_mb, runtime and gpu from its paper's config.

Checked as a cluster user sees them: ``snakemake -n --profile slurm`` at the default scale and with
``--configfile config/full.yaml``, the printed resources of each job against the merged config (computed
here independently with repro.workflow.config.load_config); the rules themselves, parsed in-process, for the conda
env behind every GPU request and the growth of memory and runtime with the attempt. The helpers behind
them (repro.workflow.stages, repro.workflow.code_closure) are unit-tested on hand-built inputs.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from test_slurm_harness import copy_tree, loaded_workflow, planned_jobs
from workflow_tools import place_user_data

from repro.workflow.code_closure import import_closure, imported_modules
from repro.workflow.config import load_config
from repro.workflow.stages import (
    DEFAULT_RESOURCES,
    SMALL_STAGE,
    check_gpu_env,
    cluster_groups,
    is_small,
    job_groups,
    select_settings,
    stage_name,
    stage_resources,
)

SCALES = {"default": [], "full": ["--configfile", "config/full.yaml"]}
GPU_ENV = "envs/torch.yaml"


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    tree = copy_tree(tmp_path_factory.mktemp("resources") / "repo")
    place_user_data(tree, "config/full.yaml")
    return tree


@pytest.fixture(scope="module", params=list(SCALES))
def scale(request, tree):
    """(name, jobs of the forced dry-run by rule, the loaded workflow's rules, declared stages) of one scale."""
    # A dry-run caps threads at the local core count; a cluster executor submits them as declared.
    args = ["--profile", "slurm", "--cores", "64", *SCALES[request.param]]
    jobs: dict[str, list] = {}
    for job in planned_jobs(tree, *args, "--forceall", "all"):
        jobs.setdefault(job.rule, []).append(job)
    with loaded_workflow(tree, args) as (workflow, _):
        rules = {r.name: r for r in workflow.rules}
        stages = {
            f"{slug.replace('-', '_')}_{st.name}": (slug, st)
            for slug, declared in workflow.globals["PAPER_STAGES"].items()
            for st in declared
        }
        attempts = {
            name: [dict(rules[name].expand_resources(jobs[name][0].wildcards, [], a)) for a in (1, 2, 3)]
            for name in stages
            if name in jobs
        }
        yield request.param, jobs, rules, stages, attempts


def _expected(slug: str, key: str, configfiles: list[str]) -> dict:
    section = load_config(*configfiles)["papers"][slug]
    return DEFAULT_RESOURCES | section.get("resources", {}).get(key, {})


def test_every_declared_stage_gets_its_configured_resources(scale):
    name, jobs, _, stages, _ = scale
    assert stages, "no paper is declared through declare_paper"
    files = [a for a in SCALES[name] if a != "--configfile"]
    for rule, (slug, st) in stages.items():
        assert rule in jobs, f"{rule} is not scheduled by the forced dry-run of `all`"
        want = _expected(slug, st.resources or st.name, files)
        for job in jobs[rule]:
            got = job.resources
            assert int(got["mem_mb"]) == want["mem_mb"], f"{name}: {rule} mem_mb {got['mem_mb']}, config {want}"
            assert int(got["runtime"]) == want["runtime"], f"{name}: {rule} runtime {got['runtime']}, config {want}"
            assert int(got.get("gpu", 0)) == want["gpu"], f"{name}: {rule} gpu {got.get('gpu', 0)}, config {want}"
            assert job.threads == want["threads"], f"{name}: {rule} threads {job.threads}, config {want}"


# Data-source rules that take their resources from `data.<source>.resources.data` (stage_resources).
DATA_RULES = {"spectra_data": "spectra", "metagenome_data": "metagenome"}


def test_data_source_rules_get_their_configured_resources(scale):
    name, jobs, _, _, _ = scale
    files = [a for a in SCALES[name] if a != "--configfile"]
    checked = 0
    for rule, source in DATA_RULES.items():
        if rule not in jobs:
            continue
        section = load_config(*files)["data"][source]
        want = DEFAULT_RESOURCES | section.get("resources", {}).get("data", {})
        got = jobs[rule][0].resources
        assert (int(got["mem_mb"]), int(got["runtime"])) == (want["mem_mb"], want["runtime"]), f"{name}: {rule} {got}"
        checked += 1
    assert checked, f"none of {sorted(DATA_RULES)} is scheduled by `all`"


def test_full_scale_is_not_the_smoke_default(scale):
    """At least one declared stage gets more at paper scale than the smoke default (the overlay is read)."""
    name, jobs, _, stages, _ = scale
    bigger = [r for r in stages if r in jobs and int(jobs[r][0].resources["mem_mb"]) > DEFAULT_RESOURCES["mem_mb"]]
    assert bool(bigger) == (name == "full"), f"{name}: stages above the default memory: {bigger}"


def test_only_rules_in_the_torch_env_ask_for_a_gpu(scale):
    name, jobs, rules, _, _ = scale
    for rule, planned in jobs.items():
        gpus = max(int(j.resources.get("gpu", 0)) for j in planned)
        env = rules[rule].conda_env or ""
        if gpus:
            assert str(env).endswith(GPU_ENV), f"{name}: {rule} asks for gpu={gpus} but runs in env {env!r}"


def test_retries_scale_memory_and_runtime_with_the_attempt(scale):
    name, _, _, _, attempts = scale
    assert attempts
    for rule, per_attempt in attempts.items():
        mem = [int(r["mem_mb"]) for r in per_attempt]
        runtime = [int(r["runtime"]) for r in per_attempt]
        assert mem == [mem[0], 2 * mem[0], 3 * mem[0]], f"{name}: {rule} mem_mb over attempts 1-3: {mem}"
        assert runtime == [runtime[0], 2 * runtime[0], 3 * runtime[0]], f"{name}: {rule} runtime: {runtime}"


def test_profile_holds_site_settings_only(repo):
    """No job resources in slurm/ (an account or QoS under default-resources is a site setting)."""
    import yaml

    profile = yaml.safe_load((repo / "slurm/config.yaml").read_text())
    assert not {"set-resources", "set-threads"} & set(profile), "slurm/config.yaml overrides rules' resources"
    defaults = profile.get("default-resources") or []
    keys = set(defaults) if isinstance(defaults, dict) else {str(d).split("=")[0] for d in defaults}
    job_keys = keys & {"mem_mb", "mem", "mem_mib", "runtime", "gpu", "threads", "cpus_per_task", "disk_mb"}
    assert not job_keys, f"slurm/config.yaml default-resources sets {job_keys}; rules take theirs from the config"


# Unit tests of the helpers -------------------------------------------------------------------------


def test_stage_resources_fall_back_to_the_defaults_and_scale_with_the_attempt():
    threads, res = stage_resources({"resources": {"train": {"mem_mb": 5000, "threads": 4}}}, "train")
    assert threads == 4 and "gpu" not in res
    assert [res["mem_mb"](None, a) for a in (1, 2, 3)] == [5000, 10000, 15000]
    assert res["runtime"](None, 2) == 2 * DEFAULT_RESOURCES["runtime"]
    threads, res = stage_resources({"resources": {"train": {"gpu": 1}}}, "evaluate")
    assert threads == DEFAULT_RESOURCES["threads"] and "gpu" not in res, "another stage's block leaks"
    assert stage_resources({"resources": {"train": {"gpu": 2}}}, "train")[1]["gpu"] == 2


def test_a_gpu_for_a_numpy_stage_is_refused():
    check_gpu_env("p_train", "torch", {"gpu": 1})
    check_gpu_env("p_data", "core", {})
    with pytest.raises(ValueError, match=r"rule p_optimize: config asks for gpu=1 but its env 'core'"):
        check_gpu_env("p_optimize", "core", {"gpu": 1})


def test_select_settings_gives_only_the_named_keys():
    section = {"enabled": True, "resources": {}, "data": ["era5"], "epochs": 3, "model": {"w": 2}}
    assert select_settings(section, None) == {"epochs": 3, "model": {"w": 2}}
    assert select_settings(section, ["model"]) == {"model": {"w": 2}}
    with pytest.raises(ValueError, match=r"\['lr'\]"):
        select_settings(section, ["lr", "epochs"])


def test_job_groups_split_runs_per_run_or_by_the_grouping_key():
    runs = [("1H", "semi"), ("13C", "semi"), ("1H", "hose")]
    assert job_groups({}, "train", runs) == {
        "1H_semi": [("1H", "semi")],
        "13C_semi": [("13C", "semi")],
        "1H_hose": [("1H", "hose")],
    }
    grouped = {"jobs": {"train": "grouped"}}
    assert job_groups(grouped, "train", runs, key=lambda run: run[:1]) == {
        "1H": [("1H", "semi"), ("1H", "hose")],
        "13C": [("13C", "semi")],
    }
    assert job_groups(grouped, "train", runs) == {"": runs}, "no key: every run in one job"
    assert job_groups(grouped, "evaluate", runs).keys() == {"1H_semi", "13C_semi", "1H_hose"}, "other stages per run"
    assert [stage_name("train", k) for k in ("", "1H")] == ["train", "train_1H"]
    assert "jobs" not in select_settings({"jobs": {"train": "grouped"}, "epochs": 3}, None), "jobs is workflow-only"


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.fixture
def mini(tmp_path) -> Path:
    """A hand-built ``repro`` package: relative imports, a lazy import, a module nothing imports."""
    _write(
        tmp_path,
        {
            "repro/__init__.py": "",
            "repro/workflow/entry.py": "import importlib\n",
            "repro/workflow/io.py": "import json\n",
            "repro/reporting/plotting.py": "import matplotlib\n",
            "repro/unused.py": "",
            "repro/papers/__init__.py": "",
            "repro/papers/demo/__init__.py": "",
            "repro/papers/demo/model.py": "from ...workflow.io import write\n",
            "repro/papers/demo/train.py": "from . import model\nimport numpy\n",
            "repro/papers/demo/figures.py": """
                def main(job):
                    from repro.reporting.plotting import save
                    from .model import Net
                """,
            "repro/papers/demo/sub/__init__.py": "",
            "repro/papers/demo/sub/deep.py": "from .. import model\n",
        },
    )
    return tmp_path


def _names(paths, root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in paths}


def test_closure_follows_relative_imports_and_parents_init(mini):
    closure = _names(import_closure("repro.papers.demo.train", mini), mini)
    assert closure == {
        "repro/__init__.py",
        "repro/workflow/entry.py",
        "repro/workflow/io.py",
        "repro/papers/__init__.py",
        "repro/papers/demo/__init__.py",
        "repro/papers/demo/model.py",
        "repro/papers/demo/train.py",
    }


def test_closure_sees_imports_inside_functions(mini):
    closure = _names(import_closure("repro.papers.demo.figures", mini), mini)
    assert {"repro/reporting/plotting.py", "repro/papers/demo/model.py"} <= closure
    assert "repro/unused.py" not in closure and "repro/papers/demo/train.py" not in closure


def test_relative_import_from_a_subpackage(mini):
    assert imported_modules(mini / "repro/papers/demo/sub/deep.py", mini) == {
        "repro.papers.demo",
        "repro.papers.demo.model",
    }
    closure = _names(import_closure("repro.papers.demo.sub.deep", mini), mini)
    assert "repro/papers/demo/sub/__init__.py" in closure and "repro/papers/demo/model.py" in closure


def test_closure_of_a_missing_entry_names_it(mini):
    with pytest.raises(ModuleNotFoundError, match="repro.papers.demo.nope"):
        import_closure("repro.papers.demo.nope", mini)


def test_small_stages_share_a_cluster_job_per_phase_and_heavy_stages_keep_their_own():
    # prepare -> train (heavy) -> evaluate, which also reads prepare's split; figures after evaluate;
    # a second heavy stage on a wildcard output, read through a callable input by `summary`.
    outputs = {
        "prepare": ["results/p/split.npz"],
        "train": ["results/p/model.pt"],
        "evaluate": ["results/p/claims.json"],
        "figures": ["results/p/figures/a.png"],
        "sweep": ["results/p/sweep/{run}.npz"],
        "summary": ["results/p/summary.json"],
    }
    inputs = {
        "prepare": [".snakemake/repro-code/x.txt"],
        "train": ["results/p/split.npz"],
        "evaluate": ["results/p/model.pt", "results/p/split.npz"],
        "figures": ["results/p/claims.json"],
        "sweep": ["results/p/split.npz"],
        "summary": [lambda wc: ["results/p/sweep/a.npz"]],
    }
    small = {"prepare": True, "train": False, "evaluate": True, "figures": True, "sweep": False, "summary": True}
    groups = cluster_groups("my-paper", outputs, inputs, small)
    assert groups["train"] is None and groups["sweep"] is None, "heavy stages are their own jobs"
    assert groups["prepare"] == "my_paper_small0"
    assert groups["evaluate"] == groups["figures"] == "my_paper_small1", "after one heavy stage: the next phase"
    # a callable input may read any stage declared before it: after every heavy stage among them
    assert groups["summary"] == "my_paper_small1"
    # no path leaves a group and enters it again
    phase = {name: int(g[-1]) for name, g in groups.items() if g}
    assert all(phase[a] <= phase[b] for a, b in [("prepare", "evaluate"), ("evaluate", "figures")])


def test_a_stage_is_small_within_the_configured_bounds_and_never_with_a_gpu():
    limits = {"threads": 1, "mem_mb": 4000, "runtime": 30}
    assert is_small({}, limits)
    assert not is_small({"threads": 2}, limits)
    assert not is_small({"mem_mb": 8000}, limits)
    assert not is_small({"runtime": 120}, limits)
    assert not is_small({"gpu": 1}, {"threads": 8, "mem_mb": 10**6, "runtime": 10**4})


def test_small_stages_share_their_papers_cluster_jobs_and_heavy_ones_do_not(scale):
    name, _, rules, stages, _ = scale
    files = [a for a in SCALES[name] if a != "--configfile"]
    limits = SMALL_STAGE | load_config(*files).get("cluster", {}).get("small_stage", {})
    for rule, (slug, st) in stages.items():
        # without --cache a stage eligible for the cache is an ordinary stage: small ones join the group
        small = is_small(_expected(slug, st.resources or st.name, files), limits)
        group = rules[rule]._group  # as declared (Rule.group is None outside cluster runs and dry-runs)
        if small and not st.localrule:
            assert group and group.startswith(f"{slug.replace('-', '_')}_small"), f"{name}: {rule} has group {group}"
        else:
            assert group is None, f"{name}: {rule} is heavy or local but in group {group}"


def test_under_the_between_workflow_cache_a_cached_stage_is_a_cluster_job_of_its_own(tree):
    """With --cache a cached stage's outputs may come from the shared cache instead of a run, so it is
    never part of a group job: its paper's other stages are grouped around it by phase."""
    with loaded_workflow(tree, ["--profile", "slurm", "--cache"]) as (workflow, _):
        declared = workflow.globals["PAPER_STAGES"]
        rules = {r.name: r for r in workflow.rules}
        cached = [f"{slug.replace('-', '_')}_{st.name}" for slug, sts in declared.items() for st in sts if st.cache]
        assert cached, "no stage declares the between-workflow cache"
        assert all(rules[r].cache and rules[r]._group is None for r in cached), [
            r for r in cached if rules[r]._group is not None
        ]
        assert rules["lwe_evaluate"]._group == "lwe_small2", "evaluate follows two cached stages: the third phase"
