"""NMRNet++: semi-supervised NMR shift prediction from unassigned literature spectra."""

NMRSHIFT = paper_config("nmrshift")
# (nucleus, variant) of every training job; a variant may restrict its nuclei.
NMRSHIFT_RUNS = [
    (n, v)
    for v, spec in NMRSHIFT["variants"].items()
    for n in spec.get("nuclei", NMRSHIFT["nuclei"])
    if n in NMRSHIFT["nuclei"]
]
NMRSHIFT_PREDICTION = "results/nmrshift/predictions/{}/{}.parquet"
NMRSHIFT_PREDICTIONS = [NMRSHIFT_PREDICTION.format(n, v) for n, v in NMRSHIFT_RUNS]
NMRSHIFT_DATA = {k: SPECTRA_OUT[k] for k in ("labelled", "unlabelled")}
# One job per nucleus in the smoke default (jobs.train: grouped), one per run at full scale.
NMRSHIFT_TRAIN_JOBS = job_groups(
    NMRSHIFT, "train", NMRSHIFT_RUNS, key=lambda run: run[:1]
)


declare_paper(
    "nmrshift",
    *[
        stage(
            stage_name("train", suffix),
            entry="repro.papers.nmrshift.train",
            resources="train",
            input=NMRSHIFT_DATA,
            output={
                f"predictions_{n}_{v}": NMRSHIFT_PREDICTION.format(n, v)
                for n, v in runs
            },
            env="torch",
            seed=True,
            cache="omit-software",
            settings=["folds", "n_labelled", "model", "train", "variants"],
            params={"checkpoints": "results/nmrshift/checkpoints", "runs": runs},
        )
        for suffix, runs in NMRSHIFT_TRAIN_JOBS.items()
    ],
    stage(
        "evaluate",
        input=NMRSHIFT_DATA | {"predictions": NMRSHIFT_PREDICTIONS},
        output={
            "metrics": "results/nmrshift/metrics.json",
            "claims": "results/nmrshift/claims.json",
            "pairs": "results/nmrshift/pairs.parquet",
        },
        env="torch",
        seed=True,
        settings=["nuclei", "variants", "curve", "claims"],
        reported=True,
    ),
    figures(
        [
            "mae_vs_unlabelled",
            "predicted_vs_true",
            "per_solvent",
            "solvent_shift_changes",
        ],
        input={
            "metrics": "results/nmrshift/metrics.json",
            "pairs": "results/nmrshift/pairs.parquet",
            "predictions": [
                f"results/nmrshift/predictions/{n}/semi.parquet"
                for n in NMRSHIFT["nuclei"]
            ],
        },
    ),
)
