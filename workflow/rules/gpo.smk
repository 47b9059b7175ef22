"""GPO: Gaussian Particle Operator, "From Basis to Basis" (arXiv 2602.21551, ICML 2026)."""

GPO_FIELDS = {
    name: directory(f"results/gpo/data/{name}.zarr")
    for name in ("darcy_lo", "darcy_hi", "ns_lo", "ns_hi")
}
GPO_STORES = {name: f"results/gpo/data/{name}.zarr" for name in GPO_FIELDS}


declare_paper(
    "gpo",
    stage(
        "data",
        input={"package": package_files("neuraloperator")},
        output=GPO_FIELDS | {"manifest": "results/gpo/data/manifest.json"},
        env="torch",
        settings=["data_seed", "darcy", "ns"],
        cache="omit-software",
    ),
    stage(
        "train",
        input=GPO_STORES,
        output={
            "predictions": "results/gpo/predictions.npz",
            "training": "results/gpo/training.json",
        },
        env="torch",
        seed=True,
        settings=[
            "model",
            "train",
            "baselines",
            "irregular_fraction",
            "scaling",
        ],
        cache="omit-software",
    ),
    stage(
        "evaluate",
        input={
            "predictions": "results/gpo/predictions.npz",
            "training": "results/gpo/training.json",
        },
        output={
            "metrics": "results/gpo/metrics.json",
            "claims": "results/gpo/claims.json",
        },
        seed=True,
        settings=[],
        reported=True,
    ),
    figures(
        ["particles", "errors", "scaling"],
        input={
            "predictions": "results/gpo/predictions.npz",
            "training": "results/gpo/training.json",
            "metrics": "results/gpo/metrics.json",
        },
    ),
    manifests=["results/gpo/data/manifest.json"],
    packages=["neuraloperator"],
)
