"""GeoCoupling: learned temporal coupling between sequence and structure in co-design (arXiv 2606.01628)."""

declare_paper(
    "geocoupling",
    stage(
        "data",
        input={"chains": STRUCTURES_OUT["chains"]},
        output={
            "benchmark": "results/geocoupling/data/benchmark.npz",
            "lattice": "results/geocoupling/data/lattice.npz",
            "manifest": "results/geocoupling/data/manifest.json",
        },
        env="md",
        settings=["windows", "scores", "search_check"],
    ),
    stage(
        "train",
        input={"benchmark": "results/geocoupling/data/benchmark.npz"},
        output={"runs": "results/geocoupling/runs.npz"},
        env="torch",
        seed=True,
        settings=[
            "scores",
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
        cache="omit-software",
    ),
    stage(
        "evaluate",
        input={
            "benchmark": "results/geocoupling/data/benchmark.npz",
            "lattice": "results/geocoupling/data/lattice.npz",
            "runs": "results/geocoupling/runs.npz",
            "saw_counts": "resources/geocoupling/saw_counts.yaml",
        },
        output={
            "metrics": "results/geocoupling/metrics.json",
            "claims": "results/geocoupling/claims.json",
        },
        env="md",
        settings=[
            "data_seed",
            "scores",
            "search",
            "search_check",
            "bootstrap_resamples",
        ],
        reported=True,
    ),
    figures(
        ["curves", "comparison", "search", "samples"],
        input={
            "metrics": "results/geocoupling/metrics.json",
            "benchmark": "results/geocoupling/data/benchmark.npz",
            "runs": "results/geocoupling/runs.npz",
        },
        env="md",
    ),
    manifests=["results/geocoupling/data/manifest.json"],
)
