"""PDRF: physically-guided data-space rectified flow nowcasting (ICML 2026 poster 63730)."""

PDRF_RADAR = "results/pdrf/data/radar.zarr"
PDRF_FORECASTS = "results/pdrf/forecasts.zarr"


declare_paper(
    "pdrf",
    stage(
        "data",
        output={
            "radar": directory(PDRF_RADAR),
            "manifest": "results/pdrf/data/manifest.json",
        },
        settings=["data_seed", "radar", "motion"],
        cache="omit-software",
    ),
    stage(
        "train",
        input={"radar": PDRF_RADAR},
        output={
            "forecasts": directory(PDRF_FORECASTS),
            "training": "results/pdrf/training.json",
        },
        env="torch",
        seed=True,
        settings=[
            "model",
            "variants",
            "sweep_variant",
            "seeds",
            "sampling",
            "train",
            "chunk",
        ],
        cache="omit-software",
    ),
    stage(
        "evaluate",
        input={
            "radar": PDRF_RADAR,
            "forecasts": PDRF_FORECASTS,
            "training": "results/pdrf/training.json",
        },
        output={
            "metrics": "results/pdrf/metrics.json",
            "claims": "results/pdrf/claims.json",
        },
        seed=True,
        settings=["pools", "chunk"],
        reported=True,
    ),
    figures(
        ["csi_by_lead", "panels", "ablation"],
        input={
            "radar": PDRF_RADAR,
            "forecasts": PDRF_FORECASTS,
            "metrics": "results/pdrf/metrics.json",
        },
    ),
    manifests=["results/pdrf/data/manifest.json"],
)
