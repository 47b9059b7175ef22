"""CoD-Lite: real-time diffusion-based generative image compression (arXiv 2604.12525, ICML 2026)."""

COD_LITE = paper_config("cod-lite")
# One training job per seed (the codec, both teachers and the student of a seed), so two cores run the seeds
# side by side.
COD_LITE_TRAIN = {
    key: expand(f"results/cod-lite/train/s{{s}}.{ext}", s=COD_LITE["seeds"])
    for key, ext in (("recon", "npz"), ("training", "json"))
}

declare_paper(
    "cod-lite",
    stage(
        "data",
        input={
            "skimage": package_files("scikit-image"),
            "imagenet": package_files("shapiq"),
        },
        output={
            "crops": directory("results/cod-lite/data/crops.zarr"),
            "test": "results/cod-lite/data/test.npz",
            "manifest": "results/cod-lite/data/manifest.json",
        },
        settings=["data_seed", "images"],
    ),
    stage(
        "train",
        input={
            "crops": "results/cod-lite/data/crops.zarr",
            "test": "results/cod-lite/data/test.npz",
        },
        output={
            "recon": "results/cod-lite/train/s{s}.npz",
            "training": "results/cod-lite/train/s{s}.json",
        },
        constraints={"s": r"\d+"},
        env="torch",
        seed=True,
        settings=["model", "train", "sampler_steps", "teacher_steps", "timing"],
        cache="omit-software",
    ),
    stage(
        "evaluate",
        input={"test": "results/cod-lite/data/test.npz", **COD_LITE_TRAIN},
        output={
            "metrics": "results/cod-lite/metrics.json",
            "claims": "results/cod-lite/claims.json",
        },
        env="torch",
        settings=["model", "jpeg", "sampler_steps", "teacher_steps", "seeds"],
        reported=True,
    ),
    figures(
        ["rate_distortion", "steps", "examples", "speed"],
        input={
            "test": "results/cod-lite/data/test.npz",
            "recon": f"results/cod-lite/train/s{COD_LITE['seeds'][0]}.npz",
            "metrics": "results/cod-lite/metrics.json",
            "reported": reported_file("cod-lite"),
        },
    ),
    manifests=["results/cod-lite/data/manifest.json"],
    packages=["scikit-image", "shapiq"],
)
