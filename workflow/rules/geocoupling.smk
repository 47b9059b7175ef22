"""GeoCoupling: learned temporal coupling between sequence and structure in co-design (arXiv 2606.01628)."""

GEOCOUPLING = paper_config("geocoupling")
GEOCOUPLING_CHAINS = (
    {"chains": STRUCTURES_OUT["chains"]} if GEOCOUPLING["benchmark"] == "chains" else {}
)


declare_paper(
    "geocoupling",
    stage(
        "data",
        input=GEOCOUPLING_CHAINS,
        output={
            "benchmark": "results/geocoupling/data/benchmark.npz",
            "manifest": "results/geocoupling/data/manifest.json",
        },
        settings=[
            "benchmark",
            "residues",
            "designable",
            "val_fraction",
            "data_seed",
            "chains",
        ],
    ),
    stage(
        "train",
        input={"benchmark": "results/geocoupling/data/benchmark.npz"},
        output={"runs": "results/geocoupling/runs.npz"},
        env="torch",
        seed=True,
        settings=[
            "seeds",
            "jitter",
            "couplings",
            "model",
            "train",
            "sampling",
            "search",
            "time_check_pairs",
        ],
        params={"checkpoints": "results/geocoupling/checkpoints"},
    ),
    stage(
        "evaluate",
        input={
            "benchmark": "results/geocoupling/data/benchmark.npz",
            "runs": "results/geocoupling/runs.npz",
            "saw_counts": "resources/geocoupling/saw_counts.yaml",
        },
        output={
            "metrics": "results/geocoupling/metrics.json",
            "claims": "results/geocoupling/claims.json",
        },
        settings=["data_seed"],
        reported=True,
    ),
    figures(
        ["curves", "comparison", "search"],
        input={"metrics": "results/geocoupling/metrics.json"},
    ),
    manifests=["results/geocoupling/data/manifest.json"],
)
