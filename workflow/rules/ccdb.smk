"""CCDB: class-conditional distribution balancing for group-robust classification without bias labels."""


def CCDB_SEEDS(name):
    """One file per training seed (each seed's methods train in their own job)."""
    return expand(f"results/ccdb/seeds/{name}", seed=paper_config("ccdb")["seeds"])


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
            "predictions": "results/ccdb/seeds/predictions_{seed}.npz",
            "table": "results/ccdb/seeds/table_{seed}.json",
        },
        constraints={"seed": "|".join(map(str, paper_config("ccdb")["seeds"]))},
        cache="omit-software",
        env="torch",
        settings=[
            "ratios",
            "main_ratio",
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
            "tables": CCDB_SEEDS("table_{seed}.json"),
            "predictions": CCDB_SEEDS("predictions_{seed}.npz"),
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
            "predictions": CCDB_SEEDS("predictions_{seed}.npz")[0],
        },
    ),
    manifests=["results/ccdb/data/manifest.json"],
)
