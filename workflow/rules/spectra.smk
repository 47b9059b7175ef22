"""Literature NMR spectra (NMRShiftDB2 + NMRexp) in the canonical parquet layout (data/spectra/)."""

SPECTRA = config["data"]["spectra"]
SPECTRA_OUT = {
    "labelled": "data/spectra/labelled.parquet",
    "unlabelled": "data/spectra/unlabelled.parquet",
    "rejections": "data/spectra/rejections.json",
    "manifest": "data/spectra/manifest.json",
}
SPECTRA_THREADS, SPECTRA_RESOURCES = stage_resources(SPECTRA, "data")


rule spectra_raw:
    input:
        molecules=repo_file("resources/spectra/molecules.smi"),
        # the user's files (local.files[].path): replacing one reruns this rule and what it feeds
        user_data=user_inputs(
            {"local": SPECTRA["local"]} if SPECTRA["source"] == "local" else {},
            ("data", "spectra"),
            "docs/papers/nmrshift.md, section 'Paper scale'",
        ),
        code=code_closure("repro.data.spectra.raw"),
    output:
        raw="data/spectra/raw.json",
    log:
        "logs/data/spectra_raw.log",
    benchmark:
        f"{BENCHMARKS}/data/spectra_raw.tsv"
    # Downloads (source: remote) need the internet, so this rule always runs on the submit host.
    localrule: True
    conda:
        "../../envs/chem.yaml"
    params:
        entry="repro.data.spectra.raw",
        section={k: v for k, v in SPECTRA.items() if k != "resources"},
        raw_dir=lambda wildcards, output: os.path.dirname(output.raw),
    script:
        ENTRY


rule spectra_data:
    input:
        raw="data/spectra/raw.json",
        code=code_closure("repro.data.spectra.process"),
    output:
        **SPECTRA_OUT,
    log:
        "logs/data/spectra.log",
    benchmark:
        f"{BENCHMARKS}/data/spectra.tsv"
    conda:
        "../../envs/chem.yaml"
    threads: SPECTRA_THREADS
    resources:
        **SPECTRA_RESOURCES,
    params:
        entry="repro.data.spectra.process",
        settings=SPECTRA["processing"],
        conformer_dir=lambda wildcards, output: os.path.join(
            os.path.dirname(output.manifest), "conformers"
        ),
    script:
        ENTRY
