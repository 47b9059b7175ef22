"""NMRNet++: semi-supervised NMR shift prediction from unassigned literature spectra."""

NMRSHIFT = paper_config("nmrshift")
NMRSHIFT_CODE = code_files("papers/nmrshift")
NMRSHIFT_FIGURES = [
    "mae_vs_unlabelled",
    "predicted_vs_true",
    "per_solvent",
    "solvent_shift_changes",
]


def nmrshift_settings():
    """The paper section plus the shipped file of reported numbers (read by evaluate)."""
    return {**NMRSHIFT, "reported_file": repo_file("resources/nmrshift/reported.yaml")}


def nmrshift_runs():
    """(nucleus, variant) of every training job; a variant may restrict its nuclei."""
    return [
        (n, v)
        for v, spec in NMRSHIFT["variants"].items()
        for n in spec.get("nuclei", NMRSHIFT["nuclei"])
        if n in NMRSHIFT["nuclei"]
    ]


def nmrshift_resource(stage, key, default):
    return NMRSHIFT.get("resources", {}).get(stage, {}).get(key, default)


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
    threads: nmrshift_resource("train", "threads", 1)
    resources:
        mem_mb=nmrshift_resource("train", "mem_mb", 2000),
        runtime=nmrshift_resource("train", "runtime", 30),
        gpu=nmrshift_resource("train", "gpu", 1 if config["scale"] == "full" else 0),
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
            f"results/nmrshift/predictions/{n}/{v}.parquet" for n, v in nmrshift_runs()
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
        settings=nmrshift_settings(),
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
