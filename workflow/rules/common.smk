"""Helpers shared by all workflow files: paths, code inputs, resources, and the paper-stage rule builder.

Each paper's rules file holds only its own wiring, a call of ``declare_paper(slug, stage(...), ..., figures(...))``.
``stages.smk`` (included after every paper) turns each declared stage into a rule named
``<slug>_<stage>`` with, derived from the stage name: the entry module ``repro.papers.<pkg>.<stage>``,
its import closure as code input, ``logs/<slug>/<stage>.log``, a ``benchmark:`` file, the conda env,
threads and resources from the paper's config at the configured scale (memory and runtime scaled by the
attempt), and params holding only the config keys the stage reads (plus the seed where it uses one).
Figures get report captions from ``workflow/report/<slug>/<name>.rst``; the target rule ``<slug>`` is
generated from the stages' outputs.
"""

import os
import yaml
import re
from pathlib import Path

from repro.workflow.code_closure import code_stamp
from repro.workflow.user_data import user_inputs as _user_inputs
from repro.workflow.stages import (
    DEFAULT_RESOURCES,
    WORKFLOW_KEYS,
    Stage,
    SMALL_STAGE,
    check_gpu_env,
    cluster_groups,
    is_small,
    job_groups,
    stage_name,
    select_settings as _select,
    stage_resources,
)

REPO = Path(workflow.basedir)
ENTRY = "../scripts/entry.py"
BENCHMARKS = "results/benchmarks"


def repo_file(rel):
    """Path of a file shipped in the repo, relative to the working directory when possible."""
    return os.path.relpath(REPO / rel)


def code_closure(entry):
    """The code input of a job running ``entry``, one stamp file standing for its import closure
    (repro.workflow.code_closure.code_stamp), so an edit of any file the stage executes reruns it.
    """
    return [code_stamp(entry, REPO / "scripts")]


def paper_config(slug):
    return config["papers"][slug]


def rule_name(slug):
    """Identifier form of a slug, used for rule names (cgmt-erm -> cgmt_erm)."""
    return slug.replace("-", "_")


def reported_file(slug):
    """The paper's reported numbers (one schema for all papers: repro.reporting.registry.load_reported)."""
    return repo_file(f"resources/{slug}/reported.yaml")


def env_file(env):
    return f"../../envs/{env}.yaml"


def _wildcards(paths):
    names = []
    for path in paths:
        for name in re.findall(r"{(\w+)(?:,[^}]*)?}", str(path)):
            if name not in names:
                names.append(name)
    return names


def stage(name, **kwargs):
    """Declare a stage: ``output`` (and ``input``) as dicts; ``settings`` the config keys it reads;
    ``seed=True`` when it uses the run's seed; ``reported=True`` to get the paper's reported numbers as
    ``input.reported``; ``resources`` the config key of its resources (default: its name).
    """
    return Stage(name, **kwargs)


def figures(names, *, input, env="core", entry=None, settings=()):
    """The figures stage: one report-flagged PNG per name, captioned by ``workflow/report/<slug>/<name>.rst``."""
    return Stage(
        "figures",
        output={"names": list(names)},
        input=input,
        env=env,
        entry=entry,
        settings=list(settings),
    )


# Folders written by the rehearsal's fixture rules (workflow/rules/fixtures.smk): a user path inside one
# is an input satisfied by that rule's directory output.
FIXTURE_DIRS = []


def user_inputs(section, prefix, docs):
    """Input function: every user file or folder named in ``section`` (the config at ``prefix``)."""
    return _user_inputs(section, prefix, docs, FIXTURE_DIRS)


# The run uses the between-workflow cache (--cache): stages eligible for it declare it, and each stays a
# cluster job of its own (its outputs may come from the cache instead of a run).
OUTPUT_CACHE = workflow.workflow_settings.cache is not None
# Cluster runs put small stages into shared jobs (config cluster.group_small_stages; local runs ignore groups).
GROUP_SMALL_STAGES = config.get("cluster", {}).get("group_small_stages", True)

# slug -> list of Stage, filled by each paper's rule file and turned into rules by stages.smk.
PAPER_STAGES = {}
# Manifests of data a paper generates itself (simulations), for its provenance.
PAPER_DATA_MANIFESTS = {}


def package_files(name):
    """Folder of the extracted members of catalogued package ``name`` (resources/package_data.yaml)."""
    return f"data/packages/{name}/files"


def declare_paper(slug, *stages, manifests=(), packages=()):
    """Register a paper's stages (rules are made by stages.smk), the manifests of the data it makes
    itself and the catalogued packages it reads (their manifests go into its provenance).
    """
    PAPER_STAGES[slug] = list(stages)
    PAPER_DATA_MANIFESTS[slug] = list(manifests) + [
        f"data/packages/{p}/manifest.json" for p in packages
    ]


def stage_rule(slug, st):
    """Everything ``stages.smk`` needs to write one rule for stage ``st`` of paper ``slug``."""
    section = paper_config(slug)
    entry = st.entry or f"repro.papers.{rule_name(slug)}.{st.name}"
    if st.name == "figures":
        outputs = {
            name: report(
                f"results/{slug}/figures/{name}.png",
                category=slug,
                subcategory="figures",
                caption=f"../report/{slug}/{name}.rst",
            )
            for name in st.output["names"]
        }
    else:
        outputs = dict(st.output)
    inputs = dict(st.input) | {"code": code_closure(entry)}
    inputs["user_data"] = user_inputs(
        _select(section, st.settings),
        ("papers", slug),
        f"docs/papers/{slug}.md, section 'Paper scale'",
    )
    if st.reported:
        inputs["reported"] = reported_file(slug)
    suffix = "".join(f"_{{{w}}}" for w in _wildcards(outputs.values()))
    threads, resources = stage_resources(section, st.resources or st.name)
    check_gpu_env(f"{rule_name(slug)}_{st.name}", st.env, resources)
    # Declared cache only when the run uses the between-workflow cache (--cache): otherwise Snakemake warns
    # at every run for every eligible stage, and the stage keeps its benchmark file.
    cache = st.cache if OUTPUT_CACHE else False
    params = {
        "entry": entry,
        "settings": _select(section, st.settings),
        "scale": config["scale"],
        "compute_threads": threads,
    }
    if st.seed:
        params["seed"] = config["seed"]
    if st.env == "torch":
        params["device"] = config["device"]
    group = stage_group(slug, st)
    if group is not None:
        # counted against the per-group limit of slurm/config.yaml (`resources: group_threads=N`, scope local)
        resources = resources | {"group_threads": threads}
    return {
        "name": f"{rule_name(slug)}_{st.name}",
        "input": inputs,
        "output": outputs,
        "log": f"logs/{slug}/{st.name}{suffix}.log",
        # Snakemake refuses a benchmark file on a stage eligible for the between-workflow cache (a cached
        # result has no run to time): under --cache, cached stages report their cost through their log's
        # "done in" line only; without --cache they are ordinary stages with a benchmark file.
        "benchmark": None if cache else f"{BENCHMARKS}/{slug}/{st.name}{suffix}.tsv",
        "conda": env_file(st.env),
        "threads": threads,
        "resources": resources,
        "params": params | st.params,
        "localrule": st.localrule,
        "wildcard_constraints": st.constraints,
        "cache": cache,
        "group": group,
    }


def _stage_outputs(slug, st):
    if st.name == "figures":
        return [f"results/{slug}/figures/{n}.png" for n in st.output["names"]]
    return [str(p) for p in st.output.values()]


def _flat(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


_PAPER_GROUPS = {}


def stage_group(slug, st):
    """The cluster job a stage shares (repro.workflow.stages.cluster_groups; None: a job of its own).

    Config ``cluster.group_small_stages`` switches grouping on, ``cluster.small_stage`` bounds the threads,
    mem_mb and runtime of a stage that shares its paper's job (a GPU stage never does). Local runs ignore
    groups; under ``--profile slurm`` each group is one Slurm job. Snakemake sums the threads and memory of
    the group's stages that could run at once (a layer: four seeds' training, say) and takes its largest
    layer, so a group could ask more CPUs than a node has and pend for ever; each grouped stage therefore
    also counts its threads as ``group_threads``, which slurm/config.yaml caps per group job (a local-scoped
    resource: layers wider than the cap run in series, their runtimes added)."""
    if not GROUP_SMALL_STAGES or st.localrule:
        return None
    if slug not in _PAPER_GROUPS:
        section = paper_config(slug)
        limits = SMALL_STAGE | config.get("cluster", {}).get("small_stage", {})
        stages = [s for s in PAPER_STAGES[slug] if not s.localrule]
        _PAPER_GROUPS[slug] = cluster_groups(
            slug,
            {s.name: _stage_outputs(slug, s) for s in stages},
            {s.name: list(_flat(s.input.values())) for s in stages},
            {
                s.name: is_small(
                    section.get("resources", {}).get(s.resources or s.name, {}),
                    limits,
                )
                and not (s.cache and OUTPUT_CACHE)
                for s in stages
            },
        )
    return _PAPER_GROUPS[slug][st.name]


def paper_figures(slug):
    """(png, caption file) of each figure of a paper's figures rule, in the rule's order."""
    name = f"{rule_name(slug)}_figures"
    if not rules.has(name):
        return []
    pngs = [str(f) for f in getattr(rules, name).output if str(f).endswith(".png")]
    return [
        (png, repo_file(f"workflow/report/{slug}/{Path(png).stem}.rst")) for png in pngs
    ]


def paper_targets(slug):
    """Files the target of a paper asks for: every stage output without wildcards, and provenance."""
    files = [f"results/{slug}/provenance.json"]
    for st in PAPER_STAGES.get(slug, []):
        files += [p for p in _stage_outputs(slug, st) if not _wildcards([p])]
    return files


def paper_seed(slug):
    """The run's seed where one of the paper's stages uses it (None otherwise), for its provenance.

    A paper none of whose stages declares ``seed=True`` gives the same results for every seed, so its
    provenance neither records the seed nor reruns when it changes. Papers not yet declared through
    ``declare_paper`` read the seed in their own rules.
    """
    stages = PAPER_STAGES.get(slug)
    if stages is None or any(st.seed for st in stages):
        return config["seed"]
    return None


def data_manifests(slug):
    """Manifests of the data a paper reads: shared sources named in its config, plus its own."""
    sources = paper_config(slug).get("data", [])
    shared = [f"data/{source}/manifest.json" for source in sources]
    return shared + PAPER_DATA_MANIFESTS.get(slug, [])
