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
ATLAS_SPLIT_LISTS = [
    repo_file("resources/atlas/atlas_val.csv"),
    repo_file("resources/atlas/atlas_test.csv"),
]


if ATLAS["source"] == "embedded":

    rule atlas_embedded:
        input:
            code=code_files("data/atlas/__init__.py", "data/atlas/embedded.py"),
        output:
            raw=directory("data/atlas/raw"),
            entries="data/atlas/entries.json",
        log:
            "logs/data/atlas_embedded.log",
        conda:
            "../../envs/md.yaml"
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
            code=code_files("data/atlas"),
        output:
            raw=directory("data/atlas/raw"),
            entries="data/atlas/entries.json",
        log:
            "logs/data/atlas_download.log",
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
            code=code_files("data/atlas"),
        output:
            entries="data/atlas/entries.json",
        log:
            "logs/data/atlas_local.log",
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
        entries="data/atlas/entries.json",
        code=code_files(
            *[
                f"data/atlas/{m}.py"
                for m in (
                    "__init__",
                    "build",
                    "preprocess",
                    "atom14",
                    "layout",
                    "splits",
                )
            ]
        ),
    output:
        processed=directory(ATLAS_FILES["processed"]),
        meta=ATLAS_FILES["meta"],
        splits=directory(ATLAS_FILES["splits"]),
        manifest=ATLAS_FILES["manifest"],
    log:
        "logs/data/atlas_data.log",
    conda:
        "../../envs/md.yaml"
    threads: ATLAS["workers"]
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        entry="repro.data.atlas.build",
        section=ATLAS,
    script:
        ENTRY
