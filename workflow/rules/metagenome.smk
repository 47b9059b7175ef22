"""Metagenome traits and incubation time series in the canonical layout (data/metagenome/)."""

METAGENOME = config["data"]["metagenome"]
METAGENOME_OUT = {
    "traits": "data/metagenome/traits.parquet",
    "observations": "data/metagenome/observations.zarr",
    "params_true": "data/metagenome/params_true.parquet",
    "constraints": "data/metagenome/constraints.yaml",
    "manifest": "data/metagenome/manifest.json",
}
METAGENOME_THREADS, METAGENOME_RESOURCES = stage_resources(METAGENOME, "data")


rule metagenome_data:
    input:
        constraints=repo_file("resources/hysomi/constraints.yaml"),
        user_files=user_inputs(
            METAGENOME if METAGENOME["source"] == "local" else {},
            ("data", "metagenome"),
            "docs/papers/hysomi.md, section 'Paper scale'",
        ),
        code=code_closure("repro.data.metagenome"),
    output:
        **METAGENOME_OUT | {"observations": directory(METAGENOME_OUT["observations"])},
    log:
        "logs/data/metagenome.log",
    benchmark:
        f"{BENCHMARKS}/data/metagenome.tsv"
    conda:
        "../../envs/torch.yaml"
    threads: METAGENOME_THREADS
    resources:
        **METAGENOME_RESOURCES,
    params:
        entry="repro.data.metagenome",
        section={k: v for k, v in METAGENOME.items() if k != "resources"},
        seed=config["seed"],
    script:
        ENTRY
