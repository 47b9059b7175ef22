"""Geo-NeW: structure-preserving learning improves geometry generalisation in neural PDEs (arXiv 2602.02788)."""

GEO_MESHES = "results/geo-newf/data/meshes.zarr"
GEO_WEIGHTS = "results/geo-newf/models/{model}.pt"


declare_paper(
    "geo-newf",
    stage(
        "data",
        output={
            "meshes": directory(GEO_MESHES),
            "manifest": "results/geo-newf/data/manifest.json",
        },
        settings=[
            "data_seed",
            "refine",
            "splits",
            "id_amplitude",
            "ood_amplitude",
            "beta",
            "source_modes",
            "source_scale",
            "neumann_scale",
        ],
    ),
    stage(
        "train",
        input={"meshes": GEO_MESHES},
        output={"weights": GEO_WEIGHTS},
        env="torch",
        settings=["model", "train", "seeds"],
        constraints={"model": "geonew|regression"},
        cache="omit-software",
    ),
    stage(
        "evaluate",
        input={
            "meshes": GEO_MESHES,
            "geonew": GEO_WEIGHTS.format(model="geonew"),
            "regression": GEO_WEIGHTS.format(model="regression"),
        },
        output={
            "metrics": "results/geo-newf/metrics.json",
            "claims": "results/geo-newf/claims.json",
            "predictions": "results/geo-newf/predictions.npz",
        },
        env="torch",
        seed=True,
        settings=["model", "seeds", "beta", "jacobian_probes"],
        reported=True,
    ),
    figures(
        ["fields", "pou", "generalisation", "conservation"],
        input={
            "meshes": GEO_MESHES,
            "metrics": "results/geo-newf/metrics.json",
            "predictions": "results/geo-newf/predictions.npz",
        },
    ),
    manifests=["results/geo-newf/data/manifest.json"],
)
