"""pai-graphon: pruning-at-initialisation masks (Random, Magnitude, SNIP, GraSP) and their graphon limits."""

PAI_GRAPHON_DATA = {
    name: directory(f"data/pai-graphon/{name}.zarr") for name in ("synthetic", "digits")
}
PAI_GRAPHON_MASKS = ["widths", "seeds", "criteria", "density", "batch_size", "blocks"]


declare_paper(
    "pai-graphon",
    stage(
        "data",
        output=PAI_GRAPHON_DATA | {"manifest": "data/pai-graphon/manifest.json"},
        seed=True,
        settings=["sizes"],
    ),
    stage(
        "masks",
        input={"data": "data/pai-graphon/{dataset}.zarr"},
        output={"masks": directory("results/pai-graphon/masks/{dataset}.zarr")},
        constraints={"dataset": "synthetic|digits"},
        env="torch",
        cache="omit-software",
        settings=PAI_GRAPHON_MASKS,
    ),
    stage(
        "train",
        input={"data": "data/pai-graphon/synthetic.zarr"},
        output={"train": "results/pai-graphon/train.json"},
        env="torch",
        cache="omit-software",
        settings=["criteria", "batch_size", "ntk"],
    ),
    stage(
        "evaluate",
        input={
            "masks_synthetic": "results/pai-graphon/masks/synthetic.zarr",
            "masks_digits": "results/pai-graphon/masks/digits.zarr",
            "data_synthetic": "data/pai-graphon/synthetic.zarr",
            "data_digits": "data/pai-graphon/digits.zarr",
            "train": "results/pai-graphon/train.json",
        },
        output={
            "metrics": "results/pai-graphon/metrics.json",
            "claims": "results/pai-graphon/claims.json",
            "graphons": directory("results/pai-graphon/graphons.zarr"),
        },
        settings=PAI_GRAPHON_MASKS + ["informative_factor"],
        reported=True,
    ),
    figures(
        ["graphons", "convergence", "degree_profiles", "alignment"],
        input={
            "metrics": "results/pai-graphon/metrics.json",
            "graphons": "results/pai-graphon/graphons.zarr",
        },
        settings=["criteria", "ntk"],
    ),
    manifests=["data/pai-graphon/manifest.json"],
)
