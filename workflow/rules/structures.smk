"""Protein chains in the canonical layout (data/structures/): package test structures or a user's PDB/mmCIF,
AFDB or CATH folder -> chains.parquet (one row per chain, split by sequence group) + manifest.json.
"""

STRUCTURES = config["data"]["structures"]
STRUCTURES_OUT = {
    "chains": "data/structures/chains.parquet",
    "manifest": "data/structures/manifest.json",
}
STRUCTURES_THREADS, STRUCTURES_RESOURCES = stage_resources(STRUCTURES, "data")
STRUCTURES_PACKAGES = (
    STRUCTURES["packages"] if STRUCTURES["source"] == "embedded" else []
)


rule structures_data:
    input:
        packages=[package_files(p) for p in STRUCTURES_PACKAGES],
        package_manifests=[
            f"data/packages/{p}/manifest.json" for p in STRUCTURES_PACKAGES
        ],
        # the folder a user places (or the rehearsal's fixture rule writes): missing, it stops the DAG naming the key
        user_files=(
            user_inputs(
                {"local": STRUCTURES["local"]},
                ("data", "structures"),
                "docs/papers/geocoupling.md, section 'Paper scale'",
            )
            if STRUCTURES["source"] == "local"
            else []
        ),
        code=code_closure("repro.data.structures.build"),
    output:
        **STRUCTURES_OUT,
    log:
        "logs/data/structures.log",
    benchmark:
        f"{BENCHMARKS}/data/structures.tsv"
    conda:
        "../../envs/md.yaml"
    threads: STRUCTURES_THREADS
    resources:
        **STRUCTURES_RESOURCES,
    params:
        entry="repro.data.structures.build",
        section={k: v for k, v in STRUCTURES.items() if k != "resources"},
    script:
        ENTRY
