"""SPECIAL: server-proximal aggregation for federated domain-incremental learning (arXiv:2601.22274)."""

SPECIAL_RUNS = {
    "runs": "results/special/runs.npz",
    "meta": "results/special/runs.json",
}


declare_paper(
    "special",
    stage(
        "train",
        input={"images": paper_config("special")["images"]},
        output=SPECIAL_RUNS,
        env="torch",
        seed=True,
        resources="train",
        settings=[
            "source",
            "image_size",
            "domains",
            "data_seed",
            "hidden",
            "seeds",
            "protocol",
            "mu",
            "main_mu",
            "anchor",
            "client_mu",
            "replay_per_client",
            "sweeps",
        ],
        params={"checkpoints": "results/special/checkpoints"},
    ),
    stage(
        "evaluate",
        input=SPECIAL_RUNS,
        output={
            "metrics": "results/special/metrics.json",
            "claims": "results/special/claims.json",
        },
        settings=["main_mu", "mu", "sweeps", "protocol"],
        reported=True,
    ),
    figures(
        ["accuracy_matrices", "bwt_sweeps", "gradient_norm"],
        input=SPECIAL_RUNS | {"metrics": "results/special/metrics.json"},
    ),
    manifests=["data/images/manifest.json"],
)
