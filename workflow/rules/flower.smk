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
        cache="omit-software",
    ),
    stage(
        "train",
        input=FLOWER_STORES,
        output={
            "scores": "results/flower/scores.npz",
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
            "rollout_steps",
            "chunk",
        ],
        cache="omit-software",
    ),
    stage(
        "evaluate",
        input={
            "scores": "results/flower/scores.npz",
            "training": "results/flower/training.json",
        },
        output={
            "metrics": "results/flower/metrics.json",
            "claims": "results/flower/claims.json",
        },
        seed=True,
        reported=True,
    ),
    figures(
        ["vrmse", "rollout", "warps", "scaling"],
        input={
            "scores": "results/flower/scores.npz",
            "metrics": "results/flower/metrics.json",
        },
    ),
    manifests=["results/flower/data/manifest.json"],
    packages=["neuraloperator"],
)
