"""Per-rule software environments: every rule that runs code has a pinned env from envs/ declaring
every third-party package its code imports; torch with CUDA only in GPU envs.

Imports are found statically (``ast``, nothing executed) in the rule's ``params.entry`` module and,
transitively, every ``repro`` module it imports: that is the code the job executes. A rule's ``code``
inputs list its whole paper package (so that edits rerun it) and would over-report, e.g. a figures
rule would have to carry torch because train.py sits in the same package; they are analysed only
for rules without ``params.entry``. The check covers every rule of every paper present.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from test_slurm_harness import REPO, copy_tree, loaded_workflow, repro_module_file, third_party_imports

# Import name -> conda package names that provide it (any one suffices). Names not listed map to
# themselves, lower-cased with '_' as '-' (numpy -> numpy, h5netcdf -> h5netcdf).
CONDA_PACKAGES = {
    "torch": {"pytorch", "pytorch-gpu", "pytorch-cpu"},
    "sklearn": {"scikit-learn"},
    "sksurv": {"scikit-survival"},
    "skimage": {"scikit-image"},
    "yaml": {"pyyaml"},
    "PIL": {"pillow"},
    "matplotlib": {"matplotlib", "matplotlib-base"},
    "mpl_toolkits": {"matplotlib", "matplotlib-base"},
    "MDAnalysis": {"mdanalysis"},
    "MDAnalysisTests": {"mdanalysistests"},
    "gribapi": {"eccodes", "python-eccodes"},
    "eccodes": {"eccodes", "python-eccodes"},
    "cv2": {"opencv", "py-opencv"},
    "Bio": {"biopython"},
    "netCDF4": {"netcdf4"},
    "torch_harmonics": {"torch-harmonics"},
    "torch_geometric": {"pytorch_geometric", "torch-geometric"},
    "google": {"protobuf", "google-cloud-storage", "gcsfs"},
    "snakemake": {"snakemake", "snakemake-minimal"},
    "tables": {"pytables"},
    "dateutil": {"python-dateutil"},
    "skfem": {"scikit-fem"},
}
TORCH = {"pytorch", "pytorch-gpu", "pytorch-cpu"}
CUDA = {"pytorch-gpu", "cuda-version", "pytorch-cuda", "cudatoolkit", "cuda-runtime"}


def conda_names(import_name: str) -> set[str]:
    return CONDA_PACKAGES.get(import_name, {import_name.lower().replace("_", "-")})


def env_packages(env_file: Path) -> dict[str, str]:
    """{package: version spec} of a conda env file (conda and pip dependencies)."""
    doc = yaml.safe_load(env_file.read_text())
    specs: list[str] = []
    for dep in doc.get("dependencies", []):
        specs += dep.get("pip", []) if isinstance(dep, dict) else [dep]
    out = {}
    for spec in specs:
        name = re.split(r"[=<>!~ \[]", spec.split("::")[-1], maxsplit=1)[0].lower()
        out[name] = spec.split("::")[-1][len(name) :].strip()
    return out


@pytest.fixture(scope="module")
def rules(tmp_path_factory):
    """(rule name, env file or None, code files) of every rule with code, from the parsed workflow."""
    tree = copy_tree(tmp_path_factory.mktemp("envs") / "repo")
    out = []
    with loaded_workflow(tree, ["--cores", "1"]) as (workflow, _):
        for rule in workflow.rules:
            if rule.norun:
                continue
            entry = rule.params.get("entry") if hasattr(rule.params, "get") else None
            if isinstance(entry, str):
                module = repro_module_file(entry, tree / "scripts")
                assert module is not None, f"rule {rule.name}: params.entry {entry!r} names no module under scripts/"
                files = [module]
            else:
                files = [tree / f for f in rule.input if isinstance(f, str) and f.endswith(".py")]
            env = Path(rule.snakefile).parent / rule.conda_env if rule.conda_env else None
            out.append((rule.name, env, files, tree))
    assert out, "the workflow has no rule that runs code"
    return out


def test_every_rule_with_code_has_a_pinned_env_from_envs(rules):
    for name, env, _, tree in rules:
        assert env is not None, f"rule {name} has no conda: directive"
        env = env.resolve()
        assert env.parent == (tree / "envs").resolve() and env.exists(), f"rule {name}: conda env {env} is not in envs/"
        loose = [p for p, spec in env_packages(env).items() if not re.match(r"^(=|==)\d", spec)]
        assert not loose, f"{env.name} (rule {name}): packages without a pinned version: {loose}"


def test_each_env_declares_every_package_its_rules_import(rules):
    missing = []
    for name, env, files, tree in rules:
        declared = set(env_packages(env))
        for module, importers in sorted(third_party_imports(files, tree / "scripts").items()):
            if not conda_names(module) & declared:
                where = ", ".join(sorted(str(p.relative_to(tree)) for p in importers))
                missing.append(
                    f"rule {name}: envs/{env.name} lacks {'/'.join(sorted(conda_names(module)))} "
                    f"(import {module} in {where})"
                )
    assert not missing, "\n".join(missing)


def test_torch_envs_are_cuda_builds_and_cpu_envs_carry_no_cuda():
    envs = sorted((REPO / "envs").glob("*.yaml"))
    assert envs
    for env in envs:
        packages = set(env_packages(env))
        if packages & TORCH:
            assert packages & CUDA, f"{env.name} has torch but no CUDA build (pytorch-gpu or cuda-version)"
        else:
            assert not packages & CUDA, f"{env.name} is a CPU env but declares {sorted(packages & CUDA)}"


def test_import_analysis_follows_repro_modules_and_skips_optional_imports(tmp_path):
    """The analysis above sees imports of repro modules it reaches and ignores guarded ones."""
    pkg = tmp_path / "repro"
    (pkg / "papers").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "papers/__init__.py").write_text("")
    (pkg / "helper.py").write_text("import scipy.stats\nfrom sklearn.metrics import r2_score\n")
    (pkg / "papers/stage.py").write_text(
        "import os\nimport numpy as np\nfrom repro.helper import x\n"
        "try:\n    import cupy\nexcept ImportError:\n    cupy = None\n"
        "import contextlib\nwith contextlib.suppress(ImportError):\n    import torch\n"
    )
    found = third_party_imports([pkg / "papers/stage.py"], tmp_path)
    assert set(found) == {"numpy", "scipy", "sklearn"}
    assert conda_names("sklearn") == {"scikit-learn"} and conda_names("h5netcdf") == {"h5netcdf"}
