"""Flower: neural PDE solvers from multihead warps (arXiv 2603.04430, ICML 2026)."""

FLOWER_STORES = {
    name: f"results/flower/data/{name}.zarr"
    for name in ("advection", "wave", "burgers")
}


declare_paper(
    "flower",
    stage(
        "data",
        input={"package": package_files("neuraloperator")},
        output={name: directory(path) for name, path in FLOWER_STORES.items()}
        | {"manifest": "results/flower/data/manifest.json"},
        env="torch",
        settings=["data_seed", "tasks"],
    ),
    stage(
        "train",
        input=FLOWER_STORES,
        output={
            "predictions": "results/flower/predictions.npz",
            "training": "results/flower/training.json",
        },
        env="torch",
        seed=True,
        settings=[
            "tasks",
            "model",
            "models",
            "seeds",
            "seeded_tasks",
            "train",
            "scaling",
        ],
    ),
    stage(
        "evaluate",
        input={
            "predictions": "results/flower/predictions.npz",
            "training": "results/flower/training.json",
        },
        output={
            "metrics": "results/flower/metrics.json",
            "claims": "results/flower/claims.json",
        },
        settings=[],
        reported=True,
    ),
    figures(
        ["vrmse", "rollout", "warps", "scaling"],
        input={
            "predictions": "results/flower/predictions.npz",
            "metrics": "results/flower/metrics.json",
        },
    ),
    manifests=["results/flower/data/manifest.json"],
    packages=["neuraloperator"],
)
