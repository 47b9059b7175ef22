"""NMRNet++: semi-supervised NMR shift prediction from unassigned literature spectra."""

NMRSHIFT = paper_config("nmrshift")
# (nucleus, variant) of every training job; a variant may restrict its nuclei.
NMRSHIFT_RUNS = [
    (n, v)
    for v, spec in NMRSHIFT["variants"].items()
    for n in spec.get("nuclei", NMRSHIFT["nuclei"])
    if n in NMRSHIFT["nuclei"]
]
NMRSHIFT_PREDICTIONS = [
    f"results/nmrshift/predictions/{n}/{v}.parquet" for n, v in NMRSHIFT_RUNS
]
NMRSHIFT_DATA = {k: SPECTRA_OUT[k] for k in ("labelled", "unlabelled")}


declare_paper(
    "nmrshift",
    stage(
        "train",
        input=NMRSHIFT_DATA,
        output={
            "predictions": "results/nmrshift/predictions/{nucleus}/{variant}.parquet"
        },
        constraints={"nucleus": "1H|13C", "variant": "[a-z0-9_]+"},
        env="torch",
        seed=True,
        settings=["folds", "n_labelled", "model", "train", "variants"],
        params={"checkpoints": "results/nmrshift/checkpoints"},
    ),
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
