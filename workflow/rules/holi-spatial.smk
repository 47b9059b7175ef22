"""Holi-Spatial: video streams to holistic 3D spatial annotations (ICML 2026 oral, arXiv 2603.07660)."""

declare_paper(
    "holi-spatial",
    stage(
        "data",
        output={
            "scenes": directory("results/holi-spatial/data/scenes"),
            "qa": "results/holi-spatial/data/qa.json",
            "manifest": "results/holi-spatial/data/manifest.json",
        },
        env="sim",
        settings=["source", "scenes", "scene_seed", "render", "qa", "scannet"],
    ),
    stage(
        "curate",
        input={
            "scenes": "results/holi-spatial/data/scenes",
            "qa": "results/holi-spatial/data/qa.json",
        },
        output={"curation": "results/holi-spatial/curation.json"},
        settings=["perception", "fusion", "lifting", "verifier", "metrics"],
    ),
    stage(
        "evaluate",
        input={
            "curation": "results/holi-spatial/curation.json",
            "qa": "results/holi-spatial/data/qa.json",
        },
        output={
            "metrics": "results/holi-spatial/metrics.json",
            "claims": "results/holi-spatial/claims.json",
        },
        settings=["metrics", "qa"],
        reported=True,
    ),
    figures(
        ["quality", "ablation", "qa"],
        input={"metrics": "results/holi-spatial/metrics.json"},
    ),
    manifests=["results/holi-spatial/data/manifest.json"],
)
