"""DDG-SFDA: discretized density-guided source-free adaptation for regression (ICML 2026 poster 63709)."""

SFDA_RUNS = {
    "runs": "results/sfda-regression/runs.npz",
    "meta": "results/sfda-regression/runs.json",
}


declare_paper(
    "sfda-regression",
    stage(
        "train",
        input={"images": "data/images/digits.npz"},
        output=SFDA_RUNS,
        env="torch",
        seed=True,
        cache="omit-software",
        resources="train",
        settings=[
            "source",
            "data_seed",
            "angles",
            "transfers",
            "dsprites",
            "mpi3d",
            "samples",
            "image_size",
            "hidden",
            "seeds",
            "methods",
            "adapt",
        ],
        params={"checkpoints": "results/sfda-regression/checkpoints"},
    ),
    stage(
        "evaluate",
        input=SFDA_RUNS,
        output={
            "metrics": "results/sfda-regression/metrics.json",
            "claims": "results/sfda-regression/claims.json",
        },
        settings=["adapt", "claim_transfer", "sanity_transfer"],
        reported=True,
    ),
    figures(
        ["target_mae", "compactness", "uncertainty"],
        input=SFDA_RUNS | {"metrics": "results/sfda-regression/metrics.json"},
    ),
    manifests=["data/images/manifest.json"],
)
