"""SurvFD / SurvSHAP-IQ: functional decomposition and Shapley interactions of survival models (arXiv 2602.16505)."""

SURVFD_DATA = {
    "simulated": "results/survfd/data/simulated.npz",
    "real": "results/survfd/data/real.npz",
}


declare_paper(
    "survfd",
    stage(
        "data",
        output=SURVFD_DATA | {"manifest": "results/survfd/data/manifest.json"},
        env="survfd",
        settings=["data_seed", "seeds", "simulation", "scenarios", "fitted", "real"],
    ),
    stage(
        "explain",
        input=SURVFD_DATA,
        output={"games": "results/survfd/games.npz"},
        env="survfd",
        settings=[
            "data_seed",
            "seeds",
            "simulation",
            "scenarios",
            "explain",
            "fitted",
            "models",
            "real",
        ],
    ),
    stage(
        "evaluate",
        input={"games": "results/survfd/games.npz"},
        output={
            "metrics": "results/survfd/metrics.json",
            "claims": "results/survfd/claims.json",
        },
        settings=["seeds", "scenarios", "explain", "fitted", "real"],
        reported=True,
    ),
    figures(
        ["interaction_curves", "fitted_recovery", "real_curves"],
        input={"metrics": "results/survfd/metrics.json"},
    ),
    manifests=["results/survfd/data/manifest.json"],
)
