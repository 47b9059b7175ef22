"""NMNC: noise-correlation credit assignment with perturbations restricted to the neural manifold."""

declare_paper(
    "nmnc",
    stage(
        "train",
        input={"digits": "data/images/digits.npz"},
        output={
            "runs": "results/nmnc/runs.json",
            "manifest": "results/nmnc/data/manifest.json",
        },
        env="torch",
        settings=[
            "source",
            "seeds",
            "model",
            "pretrain",
            "manifold",
            "perturb",
            "learn",
            "widths",
            "unbiased",
            "rnn",
        ],
    ),
    stage(
        "evaluate",
        input={"runs": "results/nmnc/runs.json"},
        output={
            "metrics": "results/nmnc/metrics.json",
            "claims": "results/nmnc/claims.json",
        },
        settings=["manifold", "learn", "widths", "perturb"],
        reported=True,
    ),
    figures(
        ["alignment", "cosines", "learning", "dimension"],
        input={
            "runs": "results/nmnc/runs.json",
            "metrics": "results/nmnc/metrics.json",
        },
    ),
    manifests=["results/nmnc/data/manifest.json"],
)
