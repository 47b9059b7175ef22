"""Neural Control: adjoint learning through equilibrium constraints (Tong et al., ICML 2026, arXiv 2605.03288)."""

NC_TASKS = list(paper_config("neural-control")["tasks"])
NC_CASES = {name: f"results/neural-control/data/{name}.npz" for name in NC_TASKS}
NC_RUNS = expand("results/neural-control/runs/{task}.npz", task=NC_TASKS)


declare_paper(
    "neural-control",
    stage(
        "data",
        output=NC_CASES | {"manifest": "results/neural-control/data/manifest.json"},
        settings=["data_seed", "rod", "cases", "tasks"],
    ),
    stage(
        "optimize",
        input={"cases": "results/neural-control/data/{task}.npz"},
        output={"runs": "results/neural-control/runs/{task}.npz"},
        settings=["seeds", "controller", "methods", "budget"],
        constraints={"task": "|".join(NC_TASKS)},
    ),
    stage(
        "gradients",
        input={"cases": NC_CASES[NC_TASKS[0]]},
        output={"gradients": "results/neural-control/gradients.json"},
        env="torch",
        seed=True,
        settings=["rod", "gradients"],
    ),
    stage(
        "learned",
        input={"cases": NC_CASES["t1"]},
        output={"learned": "results/neural-control/learned.json"},
        settings=["data_seed", "seeds", "controller", "methods", "learned"],
    ),
    stage(
        "evaluate",
        input={
            "runs": NC_RUNS,
            "cases": list(NC_CASES.values()),
            "gradients": "results/neural-control/gradients.json",
            "learned": "results/neural-control/learned.json",
        },
        output={
            "metrics": "results/neural-control/metrics.json",
            "claims": "results/neural-control/claims.json",
        },
        settings=[],
        reported=True,
    ),
    figures(
        ["loss_curves", "shapes", "memory"],
        input={
            "runs": NC_RUNS,
            "cases": list(NC_CASES.values()),
            "gradients": "results/neural-control/gradients.json",
        },
    ),
    manifests=["results/neural-control/data/manifest.json"],
)
