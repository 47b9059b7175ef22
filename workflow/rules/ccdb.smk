"""CCDB: class-conditional distribution balancing for group-robust classification without bias labels."""

declare_paper(
    "ccdb",
    stage(
        "data",
        input={"digits": "data/images/digits.npz"},
        output={
            "coloured": "results/ccdb/data/coloured.npz",
            "manifest": "results/ccdb/data/manifest.json",
        },
        settings=["source", "ratios", "copies", "data_seed"],
    ),
    stage(
        "train",
        input={"coloured": "results/ccdb/data/coloured.npz"},
        output={
            "predictions": "results/ccdb/predictions.npz",
            "table": "results/ccdb/table.json",
        },
        env="torch",
        settings=[
            "ratios",
            "main_ratio",
            "seeds",
            "model",
            "train",
            "methods",
            "other_ratio_methods",
            "ccdb",
            "jtt",
            "group_dro",
            "min_group",
        ],
    ),
    stage(
        "evaluate",
        input={
            "table": "results/ccdb/table.json",
            "predictions": "results/ccdb/predictions.npz",
        },
        output={
            "metrics": "results/ccdb/metrics.json",
            "claims": "results/ccdb/claims.json",
        },
        settings=["main_ratio", "no_bias_ratio", "seeds", "min_group"],
        reported=True,
    ),
    figures(
        ["accuracy", "ratios", "weights"],
        input={
            "metrics": "results/ccdb/metrics.json",
            "predictions": "results/ccdb/predictions.npz",
        },
    ),
    manifests=["results/ccdb/data/manifest.json"],
)
