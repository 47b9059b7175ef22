"""Poisson gradient estimation: EAT (sigmoid, cubic) vs Gumbel-SoftMax (arXiv 2602.03896)."""

POISSON_EAT_DATA = {
    "digits": "results/poisson-eat/data/digits.npz",
    "spikes": "results/poisson-eat/data/spikes.npz",
}
POISSON_EAT_RELAXATIONS = {
    "fidelity": "results/poisson-eat/fidelity.json",
    "gradients": "results/poisson-eat/gradients.json",
}
POISSON_EAT_RUNS = expand(
    "results/poisson-eat/runs/{method}.json",
    method=paper_config("poisson-eat")["methods"],
)
POISSON_EAT_BASELINE = "results/poisson-eat/runs/baseline_observed_glm.json"


declare_paper(
    "poisson-eat",
    stage(
        "data",
        output=POISSON_EAT_DATA
        | {"manifest": "results/poisson-eat/data/manifest.json"},
        settings=["data_seed", "vae", "poglm"],
    ),
    stage(
        "relaxations",
        entry="repro.papers.poisson_eat.relaxation_analysis",
        output=POISSON_EAT_RELAXATIONS,
        env="torch",
        seed=True,
        settings=["fidelity", "gradients"],
    ),
    stage(
        "train",
        input=POISSON_EAT_DATA,
        output={"run": "results/poisson-eat/runs/{method}.json"},
        constraints={"method": "eat_sigmoid|eat_cubic|eat_linear|eat_cosine|gsm"},
        env="torch",
        settings=["vae", "poglm"],
        params={"checkpoints": "results/poisson-eat/checkpoints"},
        cache="omit-software",
    ),
    stage(
        "baseline",
        entry="repro.papers.poisson_eat.glm_baseline",
        input={"spikes": POISSON_EAT_DATA["spikes"]},
        output={"run": POISSON_EAT_BASELINE},
        settings=[],
    ),
    stage(
        "evaluate",
        input=POISSON_EAT_RELAXATIONS
        | {
            "runs": POISSON_EAT_RUNS,
            "baseline": POISSON_EAT_BASELINE,
            "manifest": "results/poisson-eat/data/manifest.json",
        },
        output={
            "metrics": "results/poisson-eat/metrics.json",
            "claims": "results/poisson-eat/claims.json",
        },
        settings=["fidelity", "gradients"],
        reported=True,
    ),
    figures(
        ["moments", "wasserstein", "gradients", "vae", "poglm"],
        input=POISSON_EAT_RELAXATIONS
        | {
            "runs": POISSON_EAT_RUNS,
            "baseline": POISSON_EAT_BASELINE,
            "spikes": POISSON_EAT_DATA["spikes"],
        },
    ),
    manifests=["results/poisson-eat/data/manifest.json"],
)
