"""LWE attacks with data repetition and stepwise regression (arXiv 2604.03903; SALSA lineage)."""

declare_paper(
    "lwe",
    stage(
        "data",
        output={
            "instances": "results/lwe/data/instances.npz",
            "manifest": "results/lwe/data/manifest.json",
        },
        env="lwe",
        cache="omit-software",
        settings=[
            "data_seed",
            "source",
            "verde_dir",
            "verde_max_bad_fraction",
            "lwe",
            "reduction",
        ],
    ),
    stage(
        "train",
        input={"instances": "results/lwe/data/instances.npz"},
        output={"attempts": "results/lwe/attempts.json"},
        env="torch",
        cache="omit-software",
        seed=True,
        settings=["model", "attack"],
    ),
    stage(
        "evaluate",
        input={
            "instances": "results/lwe/data/instances.npz",
            "attempts": "results/lwe/attempts.json",
        },
        output={
            "metrics": "results/lwe/metrics.json",
            "claims": "results/lwe/claims.json",
        },
        settings=["attack"],
        reported=True,
    ),
    figures(
        ["column_profile", "attempts_power_law"],
        input={"metrics": "results/lwe/metrics.json"},
    ),
    manifests=["results/lwe/data/manifest.json"],
)
