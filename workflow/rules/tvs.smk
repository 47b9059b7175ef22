"""TVS: distinguishing imitation error from intrinsic motion learning difficulty (ICML 2026 poster 63713)."""

declare_paper(
    "tvs",
    stage(
        "data",
        input={"package": package_files("dm-control")},
        output={
            "motions": "results/tvs/data/motions.npz",
            "manifest": "results/tvs/data/manifest.json",
        },
        env="sim",
        settings=[
            "source",
            "clips",
            "frames",
            "fps",
            "motion_seed",
            "motion",
            "flaws",
            "timestep",
            "mocap",
        ],
    ),
    stage(
        "score",
        input={
            "package": package_files("dm-control"),
            "motions": "results/tvs/data/motions.npz",
        },
        output={"scores": "results/tvs/scores.json"},
        env="sim",
        settings=["timestep", "score"],
    ),
    stage(
        "track",
        input={
            "package": package_files("dm-control"),
            "motions": "results/tvs/data/motions.npz",
        },
        output={"tracking": "results/tvs/tracking.json"},
        env="sim",
        settings=["timestep", "policies", "pushes", "push_seed"],
    ),
    stage(
        "evaluate",
        input={
            "scores": "results/tvs/scores.json",
            "tracking": "results/tvs/tracking.json",
            "motions": "results/tvs/data/motions.npz",
        },
        output={
            "metrics": "results/tvs/metrics.json",
            "claims": "results/tvs/claims.json",
        },
        settings=["evaluate"],
        reported=True,
    ),
    figures(
        ["correlation", "dsje", "mid", "flaws"],
        input={"metrics": "results/tvs/metrics.json"},
    ),
    manifests=["results/tvs/data/manifest.json"],
    packages=["dm-control"],
)
