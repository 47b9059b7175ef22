"""GeoCoupling: learned temporal coupling between sequence and structure in co-design (arXiv 2606.01628)."""

declare_paper(
    "geocoupling",
    stage(
        "data",
        output={
            "lattice": "results/geocoupling/data/lattice.npz",
            "manifest": "results/geocoupling/data/manifest.json",
        },
        settings=["residues", "designable", "val_fraction", "data_seed"],
    ),
    stage(
        "train",
        input={"lattice": "results/geocoupling/data/lattice.npz"},
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
            "lattice": "results/geocoupling/data/lattice.npz",
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
