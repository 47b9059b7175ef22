"""TALDA: Lyapunov-designed descent-ascent on two-sided PL minimax problems (ICML 2026 poster 63719)."""

TALDA_DATA = {
    name: f"results/talda/data/{name}.npz"
    for name in ("quadratic", "robust_ls", "yang")
}


declare_paper(
    "talda",
    stage(
        "data",
        output=TALDA_DATA | {"manifest": "results/talda/data/manifest.json"},
    ),
    stage(
        "optimize",
        input=TALDA_DATA,
        output={"runs": directory("results/talda/runs.zarr")},
        resources="train",
        settings=["dims", "iterations", "fit", "tuned_scales"],
    ),
    stage(
        "evaluate",
        input={
            "runs": "results/talda/runs.zarr",
            "manifest": "results/talda/data/manifest.json",
        },
        output={
            "metrics": "results/talda/metrics.json",
            "claims": "results/talda/claims.json",
        },
        settings=["fit"],
        reported=True,
    ),
    figures(
        ["convergence", "rates", "lyapunov"],
        input={
            "runs": "results/talda/runs.zarr",
            "metrics": "results/talda/metrics.json",
        },
    ),
    manifests=["results/talda/data/manifest.json"],
)
