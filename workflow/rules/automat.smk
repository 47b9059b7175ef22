"""AutoMat: physics-guided agentic STEM image to crystal reconstruction (ICML 2026 poster 63827)."""

AUTOMAT_SOURCE = paper_config("automat")["source"]

declare_paper(
    "automat",
    stage(
        "data",
        # the benchmark folder a user places: its absence is reported by the stage, naming the path
        input=(
            {"benchmark": AUTOMAT_SOURCE["path"]}
            if AUTOMAT_SOURCE["kind"] == "stem2mat"
            and Path(AUTOMAT_SOURCE["path"]).exists()
            else {}
        ),
        output={
            "images": "results/automat/data/images.npz",
            "manifest": "results/automat/data/manifest.json",
        },
        env="materials",
        settings=["source", "imaging", "generate"],
    ),
    stage(
        "mlip",
        output={"energies": "results/automat/energies.json"},
        env="chgnet",
        settings=["generate", "mlip"],
    ),
    stage(
        "reconstruct",
        input={
            "images": "results/automat/data/images.npz",
            "energies": "results/automat/energies.json",
        },
        output={"reconstructions": "results/automat/reconstructions.parquet"},
        env="materials",
        settings=["imaging", "denoise", "controller"],
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
        settings=["imaging", "matcher", "checks"],
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
        settings=["imaging", "denoise", "controller"],
    ),
    manifests=["results/automat/data/manifest.json"],
)
