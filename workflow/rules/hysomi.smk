"""HySoMi: constrained hybrid model of soil microbial dynamics from metagenome traits."""

HYSOMI = paper_config("hysomi")
# "calibrated" is the per-sample calibration; it yields two baselines (nearest neighbour, two-step).
HYSOMI_METHODS = list(HYSOMI["methods"])
HYSOMI_RUNS = expand(
    "results/hysomi/runs/{complexity}/{method}.npz",
    complexity=HYSOMI["complexity"],
    method=HYSOMI_METHODS,
)
# In the smoke default (jobs.train: grouped) two training jobs per level, the trait-network methods and the
# parameter-vector ones, of similar cost, so that two cores run them side by side; one per method otherwise.
HYSOMI_TRAIN_JOBS = job_groups(
    HYSOMI,
    "train",
    [(m,) for m in HYSOMI_METHODS],
    key=lambda run: (
        ("parameters",) if run[0] in ("global", "calibrated") else ("networks",)
    ),
)
HYSOMI_DATA = {
    key: METAGENOME_OUT[key]
    for key in ("traits", "observations", "params_true", "constraints")
}


declare_paper(
    "hysomi",
    *[
        stage(
            stage_name("train", suffix),
            entry="repro.papers.hysomi.train",
            resources="train",
            input={
                k: HYSOMI_DATA[k] for k in ("traits", "observations", "constraints")
            },
            output={
                f"run_{m}": f"results/hysomi/runs/{{complexity}}/{m}.npz"
                for (m,) in methods
            },
            constraints={"complexity": "L[123]"},
            env="torch",
            seed=True,
            cache="omit-software",
            settings=[
                "n_train",
                "seeds",
                "epochs",
                "lr",
                "hidden",
                "lambda_c",
                "dt",
                "patience",
            ],
            params={
                "checkpoints": "results/hysomi/checkpoints",
                "methods": [m for (m,) in methods],
            },
        )
        for suffix, methods in HYSOMI_TRAIN_JOBS.items()
    ],
    stage(
        "evaluate",
        input=HYSOMI_DATA | {"runs": HYSOMI_RUNS},
        output={
            "metrics": "results/hysomi/metrics.json",
            "claims": "results/hysomi/claims.json",
        },
        env="torch",
        settings=["complexity", "methods", "n_train", "main_n_train", "dt"],
        reported=True,
    ),
    figures(
        ["trajectories", "parameter_recovery", "error_vs_ntrain", "equifinality"],
        input={
            "metrics": "results/hysomi/metrics.json",
            "runs": HYSOMI_RUNS,
            "observations": METAGENOME_OUT["observations"],
            "params_true": METAGENOME_OUT["params_true"],
        },
        env="torch",
        settings=["complexity", "main_n_train"],
    ),
)
