"""HySoMi: constrained hybrid model of soil microbial dynamics from metagenome traits."""

HYSOMI = paper_config("hysomi")
# "calibrated" is the per-sample calibration; it yields two baselines (nearest neighbour, two-step).
HYSOMI_METHODS = ["constrained", "unconstrained", "global", "blackbox", "calibrated"]
HYSOMI_RUNS = expand(
    "results/hysomi/runs/{complexity}/{method}.npz",
    complexity=HYSOMI["complexity"],
    method=HYSOMI_METHODS,
)
HYSOMI_DATA = {
    key: METAGENOME_OUT[key]
    for key in ("traits", "observations", "params_true", "constraints")
}


declare_paper(
    "hysomi",
    stage(
        "train",
        input={k: HYSOMI_DATA[k] for k in ("traits", "observations", "constraints")},
        output={"run": "results/hysomi/runs/{complexity}/{method}.npz"},
        constraints={"complexity": "L[123]", "method": "|".join(HYSOMI_METHODS)},
        env="torch",
        seed=True,
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
        params={"checkpoints": "results/hysomi/checkpoints"},
    ),
    stage(
        "evaluate",
        input=HYSOMI_DATA | {"runs": HYSOMI_RUNS},
        output={
            "metrics": "results/hysomi/metrics.json",
            "claims": "results/hysomi/claims.json",
        },
        env="torch",
        settings=["complexity", "n_train", "main_n_train", "dt"],
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
