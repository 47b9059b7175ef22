"""Literature NMR spectra (NMRShiftDB2 + NMRexp) in the canonical parquet layout (data/spectra/)."""

SPECTRA = config["data"]["spectra"]
SPECTRA_OUT = {
    "labelled": "data/spectra/labelled.parquet",
    "unlabelled": "data/spectra/unlabelled.parquet",
    "rejections": "data/spectra/rejections.json",
    "manifest": "data/spectra/manifest.json",
}


rule spectra_raw:
    input:
        molecules=repo_file("resources/spectra/molecules.smi"),
        code=code_files("data/spectra"),
    output:
        raw="data/spectra/raw.json",
    log:
        "logs/data/spectra_raw.log",
    # Downloads (source: remote) need the internet, so this rule always runs on the submit host.
    localrule: True
    conda:
        "../../envs/chem.yaml"
    params:
        entry="repro.data.spectra.raw",
        section=SPECTRA,
        raw_dir=lambda wildcards, output: os.path.dirname(output.raw),
    script:
        ENTRY


rule spectra_data:
    input:
        raw="data/spectra/raw.json",
        code=code_files(
            *[
                f"data/spectra/{m}.py"
                for m in (
                    "__init__",
                    "process",
                    "literature",
                    "molecules",
                    "sdf",
                    "solvents",
                )
            ]
        ),
    output:
        **SPECTRA_OUT,
    log:
        "logs/data/spectra.log",
    conda:
        "../../envs/chem.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        entry="repro.data.spectra.process",
        settings=SPECTRA["processing"],
        conformer_dir=lambda wildcards, output: os.path.join(
            os.path.dirname(output.manifest), "conformers"
        ),
    script:
        ENTRY
