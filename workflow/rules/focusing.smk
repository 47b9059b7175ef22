"""Focusing: view-consistent sparse-voxel training of 3D VAEs with per-view depth carving (ICML 2026; reconstructed)."""

FOCUSING = paper_config("focusing")
# One training job per seed (all modes of a seed in one job: they share the benchmark), so two cores run the
# seeds side by side.
FOCUSING_TRAIN = {
    key: expand(f"results/focusing/train/s{{s}}.{ext}", s=FOCUSING["seeds"])
    for key, ext in (("runs", "npz"), ("training", "json"))
}

declare_paper(
    "focusing",
    stage(
        "data",
        input={"pybullet": package_files("pybullet")},
        output={
            "shapes": directory("results/focusing/data/shapes"),
            "manifest": "results/focusing/data/manifest.json",
        },
        settings=["data_seed", "shapes", "fine_per_cell"],
    ),
    stage(
        "train",
        input={"shapes": "results/focusing/data/shapes"},
        output={
            "runs": "results/focusing/train/s{s}.npz",
            "training": "results/focusing/train/s{s}.json",
        },
        constraints={"s": r"\d+"},
        env="torch",
        seed=True,
        settings=["fine_per_cell", "model", "train", "timing_repeats"],
        cache="omit-software",
    ),
    stage(
        "evaluate",
        input={
            "shapes": "results/focusing/data/shapes",
            "manifest": "results/focusing/data/manifest.json",
            **FOCUSING_TRAIN,
        },
        output={
            "metrics": "results/focusing/metrics.json",
            "claims": "results/focusing/claims.json",
        },
        env="torch",
        settings=["seeds", "fscore_tau"],
        reported=True,
    ),
    figures(
        ["summary", "active_cells", "reconstructions"],
        input={
            "shapes": "results/focusing/data/shapes",
            "runs": f"results/focusing/train/s{FOCUSING['seeds'][0]}.npz",
            "metrics": "results/focusing/metrics.json",
        },
    ),
    manifests=["results/focusing/data/manifest.json"],
    packages=["pybullet"],
)
