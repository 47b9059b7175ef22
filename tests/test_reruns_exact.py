"""Exact reruns: a change schedules the stages whose code, config keys or seed it touches, and nothing else.

One run of TALDA (the declared paper that is cheapest to run) in a copy of the workflow; each test then
makes one change, dry-runs and restores the change with its modification time, so every test starts
from a complete run. The copy declares ``seed=True`` on TALDA's optimize stage (TALDA draws its randomness
from ``data_seed``, not the run's seed) so that the seed test sees both a stage that uses the seed and
stages that do not. Static checks over every declared paper make the same points without running them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

import pytest
from test_slurm_harness import copy_tree, loaded_workflow, planned_jobs, snakemake

pytestmark = pytest.mark.e2e
PAPER = "talda"
# Jobs that gather a paper's outputs: its target rule and its provenance (which reads its claims).
GATHER = {PAPER, "provenance"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = copy_tree(tmp_path_factory.mktemp("exact") / "repo")
    rules = root / f"workflow/rules/{PAPER}.smk"
    text = rules.read_text()
    marker = 'stage(\n        "optimize",\n'
    assert marker in text, f"{rules} no longer declares an optimize stage as expected"
    rules.write_text(text.replace(marker, marker + "        seed=True,\n"))
    snakemake(root, "--cores", "2", PAPER, timeout=900)
    assert scheduled(root) == set(), "a completed run leaves nothing to do"
    return root


def scheduled(root: Path, *args: str) -> set[str]:
    return {job.rule for job in planned_jobs(root, "--cores", "1", PAPER, *args)}


@contextlib.contextmanager
def edited(path: Path):
    """Append a comment to ``path`` (a code edit that changes no behaviour); restore bytes and mtime after."""
    backup = path.with_name(path.name + ".orig")
    shutil.copy2(path, backup)
    try:
        with open(path, "a") as fh:
            fh.write("\n# edited by test_reruns_exact\n")
        os.utime(path)
        yield
    finally:
        os.replace(backup, path)


def stages_from(name: str, order=("data", "optimize", "evaluate", "figures")) -> set[str]:
    return {f"{PAPER}_{s}" for s in order[order.index(name) :]}


def test_editing_the_figures_module_schedules_only_figures(built):
    with edited(built / f"scripts/repro/papers/{PAPER}/figures.py"):
        assert scheduled(built) == {f"{PAPER}_figures", PAPER}


def test_editing_shared_claims_code_schedules_evaluate_onward(built):
    with edited(built / "scripts/repro/reporting/claims.py"):
        assert scheduled(built) == stages_from("evaluate") | GATHER


def test_editing_the_paper_methods_schedules_optimize_onward(built):
    with edited(built / f"scripts/repro/papers/{PAPER}/methods.py"):
        assert scheduled(built) == stages_from("optimize") | GATHER


def test_changing_the_seed_reruns_only_what_uses_it(built):
    assert scheduled(built, "--config", "seed=7") == stages_from("optimize") | GATHER


# Static checks over every declared paper (no run needed) --------------------------------------------


def expand_code_stamps(inputs, root: Path) -> set[str]:
    """A rule's inputs with each code stamp (.snakemake/repro-code/<entry>.txt) replaced by the files it
    stands for (repro.workflow.code_closure.code_stamp lists one path per line)."""
    out = set()
    for f in map(str, inputs):
        if "repro-code/" in f:
            out |= {line.split(" ", 1)[0] for line in (root / f).read_text().splitlines()}
        else:
            out.add(f)
    return out


@pytest.fixture(scope="module")
def declared(tmp_path_factory):
    root = copy_tree(tmp_path_factory.mktemp("declared") / "repo")
    with loaded_workflow(root, []) as (workflow, _):
        stages = workflow.globals["PAPER_STAGES"]
        rules = {
            r.name: {"inputs": expand_code_stamps(r.input, root), "params": dict(r.params.items())}
            for r in workflow.rules
        }
    return stages, rules


def _rule(slug: str, stage_name: str) -> str:
    return f"{slug.replace('-', '_')}_{stage_name}"


def test_every_evaluate_stage_reads_the_shared_claims_code(declared):
    stages, rules = declared
    evaluates = [_rule(slug, st.name) for slug, sts in stages.items() for st in sts if st.name == "evaluate"]
    assert evaluates, "no declared paper has an evaluate stage"
    for rule in evaluates:
        # Paths are relative to wherever the in-process workflow load left the working directory.
        listed = any(Path(f).as_posix().endswith("scripts/repro/reporting/claims.py") for f in rules[rule]["inputs"])
        assert listed, f"{rule} does not list repro/reporting/claims.py as code"


def test_no_paper_reads_another_papers_code(declared):
    """Editing one paper's package reruns none of another declared paper's stages."""
    stages, rules = declared
    for slug in stages:
        folder = f"scripts/repro/papers/{slug.replace('-', '_')}/"
        for other, sts in stages.items():
            if other == slug:
                continue
            for st in sts:
                name = _rule(other, st.name)
                stray = sorted(f for f in rules[name]["inputs"] if f.startswith(folder))
                assert not stray, f"rule {name} lists {slug}'s code {stray}: editing it would rerun {other}"


def test_figures_read_no_training_code(declared):
    """A figures stage's code is its own module and shared plotting/io, never the training stage's entry."""
    stages, rules = declared
    for slug, sts in stages.items():
        names = {st.name for st in sts}
        if "figures" not in names:
            continue
        inputs = rules[_rule(slug, "figures")]["inputs"]
        pkg = slug.replace("-", "_")
        for other in names - {"figures"}:
            entry = f"scripts/repro/papers/{pkg}/{other}.py"
            assert entry not in inputs, f"{slug} figures list {entry}: editing that stage would rerun figures"


def test_only_stages_declaring_seed_get_it(declared):
    stages, rules = declared
    for slug, sts in stages.items():
        for st in sts:
            params = rules[_rule(slug, st.name)]["params"]
            assert ("seed" in params) == st.seed, (
                f"{_rule(slug, st.name)}: seed param {'seed' in params}, declared {st.seed}"
            )
