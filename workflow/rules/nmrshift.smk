"""NMRNet++: semi-supervised NMR shift prediction from unassigned literature spectra."""

NMRSHIFT = paper_config("nmrshift")
NMRSHIFT_CODE = code_files("papers/nmrshift")
NMRSHIFT_FIGURES = [
    "mae_vs_unlabelled",
    "predicted_vs_true",
    "per_solvent",
    "solvent_shift_changes",
]


# The paper section plus the shipped file of reported numbers (read by evaluate).
NMRSHIFT_SETTINGS = {
    **NMRSHIFT,
    "reported_file": repo_file("resources/nmrshift/reported.yaml"),
}
# (nucleus, variant) of every training job; a variant may restrict its nuclei.
NMRSHIFT_RUNS = [
    (n, v)
    for v, spec in NMRSHIFT["variants"].items()
    for n in spec.get("nuclei", NMRSHIFT["nuclei"])
    if n in NMRSHIFT["nuclei"]
]
NMRSHIFT_TRAIN_RESOURCES = NMRSHIFT.get("resources", {}).get("train", {})


rule nmrshift_train:
    input:
        labelled=SPECTRA_OUT["labelled"],
        unlabelled=SPECTRA_OUT["unlabelled"],
        code=NMRSHIFT_CODE,
    output:
        predictions="results/nmrshift/predictions/{nucleus}/{variant}.parquet",
    log:
        "logs/nmrshift/train/{nucleus}/{variant}.log",
    wildcard_constraints:
        nucleus="1H|13C",
        variant="[a-z0-9_]+",
    conda:
        "../../envs/torch.yaml"
    threads: NMRSHIFT_TRAIN_RESOURCES.get("threads", 1)
    resources:
        mem_mb=NMRSHIFT_TRAIN_RESOURCES.get("mem_mb", 2000),
        runtime=NMRSHIFT_TRAIN_RESOURCES.get("runtime", 30),
        gpu=NMRSHIFT_TRAIN_RESOURCES.get("gpu", 1 if config["scale"] == "full" else 0),
    params:
        entry="repro.papers.nmrshift.train",
        settings=lambda wc: {
            **NMRSHIFT,
            "folds": NMRSHIFT["variants"][wc.variant].get("folds", NMRSHIFT["folds"]),
        },
        seed=config["seed"],
        device=config["device"],
        checkpoints="results/nmrshift/checkpoints/{nucleus}/{variant}",
    script:
        ENTRY


rule nmrshift_evaluate:
    input:
        predictions=[
            f"results/nmrshift/predictions/{n}/{v}.parquet" for n, v in NMRSHIFT_RUNS
        ],
        labelled=SPECTRA_OUT["labelled"],
        unlabelled=SPECTRA_OUT["unlabelled"],
        reported=repo_file("resources/nmrshift/reported.yaml"),
        code=NMRSHIFT_CODE,
    output:
        metrics="results/nmrshift/metrics.json",
        claims="results/nmrshift/claims.json",
        pairs="results/nmrshift/pairs.parquet",
    log:
        "logs/nmrshift/evaluate.log",
    conda:
        "../../envs/torch.yaml"
    params:
        entry="repro.papers.nmrshift.evaluate",
        settings=NMRSHIFT_SETTINGS,
        seed=config["seed"],
        scale=config["scale"],
    script:
        ENTRY


rule nmrshift_figures:
    input:
        metrics="results/nmrshift/metrics.json",
        pairs="results/nmrshift/pairs.parquet",
        predictions=[
            f"results/nmrshift/predictions/{n}/semi.parquet"
            for n in NMRSHIFT["nuclei"]
        ],
        code=NMRSHIFT_CODE,
    output:
        **{
            name: report(
                f"results/nmrshift/figures/{name}.png",
                category="NMRNet++",
                caption=f"../report/nmrshift/{name}.rst",
            )
            for name in NMRSHIFT_FIGURES
        },
    log:
        "logs/nmrshift/figures.log",
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.papers.nmrshift.figures",
    script:
        ENTRY


rule nmrshift:
    input:
        paper_targets("nmrshift"),
        rules.nmrshift_figures.output,
        SPECTRA_OUT["rejections"],
