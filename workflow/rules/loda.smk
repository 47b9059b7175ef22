"""LoDA: task-driven LoRA subspace decomposition for continual learning (arXiv:2603.00191)."""

LODA_RUNS = {
    "runs": "results/loda/runs.npz",
    "systems": "results/loda/systems.npz",
    "energies": "results/loda/energies.parquet",
    "meta": "results/loda/runs.json",
}


declare_paper(
    "loda",
    stage(
        "train",
        input={"images": "data/images/digits.npz"},
        output=LODA_RUNS,
        env="torch",
        seed=True,
        resources="train",
        settings=[
            "source",
            "domains",
            "data_seed",
            "hidden",
            "seeds",
            "pretrain",
            "methods",
            "lora",
        ],
        params={"checkpoints": "results/loda/checkpoints"},
    ),
    stage(
        "evaluate",
        input=LODA_RUNS,
        output={
            "metrics": "results/loda/metrics.json",
            "claims": "results/loda/claims.json",
        },
        settings=["lora"],
        reported=True,
    ),
    figures(
        ["accuracy", "energy", "accuracy_matrices"],
        input={"metrics": "results/loda/metrics.json"},
    ),
    manifests=["data/images/manifest.json"],
)
