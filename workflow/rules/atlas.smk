"""ATLAS MD trajectories in the canonical layout (data/atlas/): raw archives -> mdtraj preprocessing."""

ATLAS = config["data"]["atlas"]
ATLAS_RAW = ATLAS["local"]["root"] if ATLAS["source"] == "local" else "data/atlas/raw"
# Paths downstream rules read (plain strings: directory() is only for the producing rule).
ATLAS_FILES = {
    "processed": "data/atlas/processed",
    "meta": "data/atlas/meta.parquet",
    "splits": "data/atlas/splits",
    "manifest": "data/atlas/manifest.json",
}
# `workers` processes by default; a `resources: {data: {...}}` entry in the section replaces this.
ATLAS_THREADS, ATLAS_RESOURCES = stage_resources(
    {
        "resources": {
            "data": {"threads": ATLAS["workers"], "mem_mb": 4000, "runtime": 120}
        }
    }
    | ATLAS,
    "data",
)
# The embedded source (two bundled proteins, seconds of work) runs its two steps as one cluster job: a chain
# of cluster jobs waits in the queue once per link, and biodynaspec's chain starts with these two.
ATLAS_GROUP = (
    "atlas_embedded" if ATLAS["source"] == "embedded" and GROUP_SMALL_STAGES else None
)
ATLAS_SPLIT_LISTS = [
    repo_file("resources/atlas/atlas_val.csv"),
    repo_file("resources/atlas/atlas_test.csv"),
]


if ATLAS["source"] == "embedded":

    rule atlas_embedded:
        input:
            code=code_closure("repro.data.atlas.embedded"),
        output:
            raw=directory("data/atlas/raw"),
            entries="data/atlas/entries.json",
        log:
            "logs/data/atlas_embedded.log",
        benchmark:
            f"{BENCHMARKS}/data/atlas_embedded.tsv"
        # first among ready jobs: biodynaspec's chain (about 45 s of training and evaluation, one after the
        # other) waits on it, and by Snakemake's default order (larger inputs first) it started last
        priority: 1
        group:
            ATLAS_GROUP
        conda:
            "../../envs/md.yaml"
        resources:
            **stage_resources({}, "data")[1],
        params:
            entry="repro.data.atlas.embedded",
            section=ATLAS,
        script:
            ENTRY

elif ATLAS["source"] == "remote":

    localrules:
        atlas_download,

    rule atlas_download:
        input:
            splits=ATLAS_SPLIT_LISTS,
            code=code_closure("repro.data.atlas.remote"),
        output:
            raw=directory("data/atlas/raw"),
            entries="data/atlas/entries.json",
        log:
            "logs/data/atlas_download.log",
        benchmark:
            f"{BENCHMARKS}/data/atlas_download.tsv"
        conda:
            "../../envs/md.yaml"
        params:
            entry="repro.data.atlas.remote",
            section=ATLAS,
            cache="data/atlas/downloads",
        script:
            ENTRY

else:

    rule atlas_local:
        input:
            splits=ATLAS_SPLIT_LISTS,
            # the user's ATLAS folder (local.root): a listing of its files, so a replaced file reruns
            user_data=user_inputs(
                {"local": ATLAS["local"]},
                ("data", "atlas"),
                "docs/papers/biodynaspec.md, section 'Paper scale'",
            ),
            code=code_closure("repro.data.atlas.remote"),
        output:
            entries="data/atlas/entries.json",
        log:
            "logs/data/atlas_local.log",
        benchmark:
            f"{BENCHMARKS}/data/atlas_local.tsv"
        conda:
            "../../envs/md.yaml"
        params:
            entry="repro.data.atlas.remote",
            section=ATLAS,
        script:
            ENTRY


rule atlas_data:
    input:
        raw=ATLAS_RAW,
        # a user's folder (source: local) as a listing of its files: a replaced trajectory reruns this rule
        user_data=user_inputs(
            {"local": ATLAS["local"]} if ATLAS["source"] == "local" else {},
            ("data", "atlas"),
            "docs/papers/biodynaspec.md, section 'Paper scale'",
        ),
        entries="data/atlas/entries.json",
        code=code_closure("repro.data.atlas.build"),
    output:
        processed=directory(ATLAS_FILES["processed"]),
        meta=ATLAS_FILES["meta"],
        splits=directory(ATLAS_FILES["splits"]),
        manifest=ATLAS_FILES["manifest"],
    log:
        "logs/data/atlas_data.log",
    benchmark:
        f"{BENCHMARKS}/data/atlas_data.tsv"
    priority: 1
    group:
        ATLAS_GROUP
    conda:
        "../../envs/md.yaml"
    threads: ATLAS_THREADS
    resources:
        **ATLAS_RESOURCES,
    params:
        entry="repro.data.atlas.build",
        section=ATLAS,
    script:
        ENTRY
