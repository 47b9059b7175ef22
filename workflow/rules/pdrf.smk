"""PDRF: physically-guided data-space rectified flow for precipitation nowcasting (ICML 2026 poster 63730)."""

declare_paper(
    "pdrf",
    stage(
        "data",
        output={
            "radar": directory("results/pdrf/data/radar.zarr"),
            "manifest": "results/pdrf/data/manifest.json",
        },
        settings=["data_seed", "radar"],
    ),
    stage(
        "train",
        input={"radar": "results/pdrf/data/radar.zarr"},
        output={
            "predictions": "results/pdrf/predictions.npz",
            "training": "results/pdrf/training.json",
        },
        env="torch",
        seed=True,
        settings=[
            "motion",
            "model",
            "variants",
            "sweep_variant",
            "seeds",
            "sampling",
            "train",
        ],
    ),
    stage(
        "evaluate",
        input={
            "radar": "results/pdrf/data/radar.zarr",
            "predictions": "results/pdrf/predictions.npz",
            "training": "results/pdrf/training.json",
        },
        output={
            "metrics": "results/pdrf/metrics.json",
            "claims": "results/pdrf/claims.json",
        },
        settings=["motion", "pools"],
        reported=True,
    ),
    figures(
        ["csi_by_lead", "panels", "ablation"],
        input={
            "radar": "results/pdrf/data/radar.zarr",
            "predictions": "results/pdrf/predictions.npz",
            "metrics": "results/pdrf/metrics.json",
        },
        settings=["motion"],
    ),
    manifests=["results/pdrf/data/manifest.json"],
)
