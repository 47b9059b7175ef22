"""AutoMat: physics-guided agentic STEM image to crystal reconstruction (ICML 2026 poster 63827)."""

declare_paper(
    "automat",
    stage(
        "data",
        output={
            "images": "results/automat/data/images.npz",
            "manifest": "results/automat/data/manifest.json",
        },
        env="materials",
        settings=["source", "imaging", "generate", "checks"],
    ),
    stage(
        "reconstruct",
        input={"images": "results/automat/data/images.npz"},
        output={
            "reconstructions": "results/automat/reconstructions.parquet",
            "energies": "results/automat/energies.json",
        },
        env="chgnet",
        settings=["imaging", "denoise", "controller", "verify", "mlip"],
    ),
    stage(
        "evaluate",
        input={
            "images": "results/automat/data/images.npz",
            "energies": "results/automat/energies.json",
            "reconstructions": "results/automat/reconstructions.parquet",
        },
        output={
            "metrics": "results/automat/metrics.json",
            "claims": "results/automat/claims.json",
        },
        env="materials",
        settings=["imaging", "controller", "verify", "matcher", "checks"],
        reported=True,
    ),
    figures(
        ["accuracy_vs_dose", "panels"],
        input={
            "metrics": "results/automat/metrics.json",
            "images": "results/automat/data/images.npz",
            "reconstructions": "results/automat/reconstructions.parquet",
        },
        env="materials",
        settings=["imaging", "denoise", "controller", "verify"],
    ),
    manifests=["results/automat/data/manifest.json"],
)
