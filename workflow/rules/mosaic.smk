"""Mosaic: block-sparse attention at native resolution, learned functional perturbations, fair-CRPS ensembles."""

MOSAIC_VARIANTS = paper_config("mosaic")["variants"]
MOSAIC_DATA = {"store": ERA5_STORE, "norm_stats": ERA5_OUT["norm_stats"]}
MOSAIC_MODELS = {v: f"results/mosaic/models/{v}.pt" for v in MOSAIC_VARIANTS}


declare_paper(
    "mosaic",
    stage(
        "train",
        input=MOSAIC_DATA,
        output={
            "model": "results/mosaic/models/{variant}.pt",
            "history": "results/mosaic/models/{variant}_history.json",
        },
        constraints={"variant": "mosaic|dense|mse|compressive"},
        env="torch",
        seed=True,
        settings=["splits", "model", "train"],
        params={"checkpoints": "results/mosaic/checkpoints"},
        cache="omit-software",
    ),
    stage(
        "attention_cost",
        output={"cost": "results/mosaic/attention_cost.json"},
        env="torch",
        seed=True,
        settings=["attention_cost"],
        resources="evaluate",
    ),
    stage(
        "evaluate",
        input=MOSAIC_DATA
        | MOSAIC_MODELS
        | {"sample": ERA5_SAMPLE, "cost": "results/mosaic/attention_cost.json"},
        output={
            **{
                f"forecast_{v}": directory(f"results/mosaic/forecasts/{v}.zarr")
                for v in MOSAIC_VARIANTS
            },
            "metrics": "results/mosaic/metrics.json",
            "claims": "results/mosaic/claims.json",
        },
        env="torch",
        seed=True,
        settings=["variants", "splits", "evaluate"],
        reported=True,
    ),
    figures(
        ["spectral_ratio", "skill", "attention_cost"],
        input={
            "metrics": "results/mosaic/metrics.json",
            "cost": "results/mosaic/attention_cost.json",
        },
        settings=["evaluate"],
    ),
)
