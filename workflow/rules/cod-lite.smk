"""CoD-Lite: real-time diffusion-based generative image compression (arXiv 2604.12525, ICML 2026)."""

declare_paper(
    "cod-lite",
    stage(
        "data",
        input={
            "skimage": package_files("scikit-image"),
            "imagenet": package_files("shapiq"),
        },
        output={
            "images": "results/cod-lite/data/images.npz",
            "manifest": "results/cod-lite/data/manifest.json",
        },
        settings=["data_seed", "images"],
    ),
    stage(
        "train",
        input={"images": "results/cod-lite/data/images.npz"},
        output={
            "recon": "results/cod-lite/recon.npz",
            "training": "results/cod-lite/training.json",
        },
        env="torch",
        seed=True,
        settings=[
            "model",
            "train",
            "sampler_steps",
            "teacher_steps",
            "seeds",
            "timing_repeats",
        ],
    ),
    stage(
        "evaluate",
        input={
            "images": "results/cod-lite/data/images.npz",
            "recon": "results/cod-lite/recon.npz",
            "training": "results/cod-lite/training.json",
        },
        output={
            "metrics": "results/cod-lite/metrics.json",
            "claims": "results/cod-lite/claims.json",
        },
        env="torch",
        settings=["jpeg_qualities", "sampler_steps", "teacher_steps", "seeds"],
        reported=True,
    ),
    figures(
        ["rate_distortion", "steps", "examples"],
        input={
            "images": "results/cod-lite/data/images.npz",
            "recon": "results/cod-lite/recon.npz",
            "metrics": "results/cod-lite/metrics.json",
        },
    ),
    manifests=["results/cod-lite/data/manifest.json"],
    packages=["scikit-image", "shapiq"],
)
