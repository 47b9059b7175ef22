"""Focusing: view-consistent sparse-voxel training of 3D VAEs with depth carving (ICML 2026; reconstructed)."""

declare_paper(
    "focusing",
    stage(
        "data",
        input={"pybullet": package_files("pybullet")},
        output={
            "shapes": "results/focusing/data/shapes.npz",
            "manifest": "results/focusing/data/manifest.json",
        },
        settings=["data_seed", "shapes", "fine_per_cell"],
    ),
    stage(
        "train",
        input={"shapes": "results/focusing/data/shapes.npz"},
        output={
            "runs": "results/focusing/runs.npz",
            "training": "results/focusing/training.json",
        },
        env="torch",
        seed=True,
        settings=["fine_per_cell", "model", "train", "seeds"],
    ),
    stage(
        "evaluate",
        input={
            "shapes": "results/focusing/data/shapes.npz",
            "manifest": "results/focusing/data/manifest.json",
            "runs": "results/focusing/runs.npz",
            "training": "results/focusing/training.json",
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
            "shapes": "results/focusing/data/shapes.npz",
            "runs": "results/focusing/runs.npz",
            "metrics": "results/focusing/metrics.json",
        },
    ),
    manifests=["results/focusing/data/manifest.json"],
    packages=["pybullet"],
)
