"""JanusPipe: pipeline-parallel training of conservative MLIPs (arXiv 2605.18404, ICML 2026 poster 63763)."""

declare_paper(
    "januspipe",
    stage(
        "data",
        output={
            "configs": "results/januspipe/data/configs.npz",
            "manifest": "results/januspipe/data/manifest.json",
        },
        env="materials",
        settings=["generate"],
    ),
    stage(
        "train",
        input={"configs": "results/januspipe/data/configs.npz"},
        output={
            "model": "results/januspipe/model.pt",
            "summary": "results/januspipe/train.json",
        },
        env="torch",
        seed=True,
        settings=["model", "train"],
        cache="omit-software",
    ),
    stage(
        "pipeline",
        input={
            "configs": "results/januspipe/data/configs.npz",
            "model": "results/januspipe/model.pt",
        },
        output={
            "costs": "results/januspipe/costs.json",
            "pipeline": "results/januspipe/pipeline.json",
        },
        env="torch",
        seed=True,
        settings=["model", "train", "costs", "simulate", "pipeline"],
    ),
    stage(
        "evaluate",
        input={
            "costs": "results/januspipe/costs.json",
            "pipeline": "results/januspipe/pipeline.json",
            "train": "results/januspipe/train.json",
        },
        output={
            "metrics": "results/januspipe/metrics.json",
            "claims": "results/januspipe/claims.json",
        },
        settings=["simulate", "check_grid"],
        reported=True,
    ),
    figures(
        ["timeline", "schedules", "phase_costs"],
        input={
            "metrics": "results/januspipe/metrics.json",
            "costs": "results/januspipe/costs.json",
        },
    ),
    manifests=["results/januspipe/data/manifest.json"],
)
