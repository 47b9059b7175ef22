"""Poisson gradient estimation: EAT (sigmoid, cubic) vs Gumbel-SoftMax (arXiv 2602.03896)."""

POISSON_EAT = paper_config("poisson-eat")
POISSON_EAT_CODE = code_files("papers/poisson_eat")
POISSON_EAT_DATA = {
    "digits": "results/poisson-eat/data/digits.npz",
    "spikes": "results/poisson-eat/data/spikes.npz",
    "manifest": "results/poisson-eat/data/manifest.json",
}
POISSON_EAT_RUNS = expand(
    "results/poisson-eat/runs/{method}.json", method=POISSON_EAT["methods"]
)
POISSON_EAT_FIGURES = ["moments", "wasserstein", "gradients", "vae", "poglm"]
POISSON_EAT_RES = {
    stage: POISSON_EAT.get("resources", {}).get(stage, {})
    for stage in ("relaxations", "train")
}


PAPER_DATA_MANIFESTS["poisson-eat"] = [POISSON_EAT_DATA["manifest"]]


rule poisson_eat_data:
    input:
        code=POISSON_EAT_CODE,
    output:
        **POISSON_EAT_DATA,
    log:
        "logs/poisson-eat/data.log",
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.papers.poisson_eat.data",
        settings=POISSON_EAT,
    script:
        ENTRY


rule poisson_eat_relaxations:
    input:
        code=POISSON_EAT_CODE,
    output:
        fidelity="results/poisson-eat/fidelity.json",
        gradients="results/poisson-eat/gradients.json",
    log:
        "logs/poisson-eat/relaxations.log",
    conda:
        "../../envs/torch.yaml"
    threads: POISSON_EAT_RES["relaxations"].get("threads", 1)
    resources:
        mem_mb=POISSON_EAT_RES["relaxations"].get("mem_mb", 2000),
        runtime=POISSON_EAT_RES["relaxations"].get("runtime", 30),
        gpu=POISSON_EAT_RES["relaxations"].get("gpu", 0),
    params:
        entry="repro.papers.poisson_eat.relaxation_analysis",
        settings=POISSON_EAT,
        seed=config["seed"],
    script:
        ENTRY


rule poisson_eat_train:
    input:
        digits=POISSON_EAT_DATA["digits"],
        spikes=POISSON_EAT_DATA["spikes"],
        code=POISSON_EAT_CODE,
    output:
        "results/poisson-eat/runs/{method}.json",
    log:
        "logs/poisson-eat/train/{method}.log",
    wildcard_constraints:
        method="eat_sigmoid|eat_cubic|eat_linear|eat_cosine|gsm",
    conda:
        "../../envs/torch.yaml"
    threads: POISSON_EAT_RES["train"].get("threads", 1)
    resources:
        mem_mb=POISSON_EAT_RES["train"].get("mem_mb", 2000),
        runtime=POISSON_EAT_RES["train"].get("runtime", 60),
        gpu=POISSON_EAT_RES["train"].get("gpu", 0),
    params:
        entry="repro.papers.poisson_eat.train",
        settings=POISSON_EAT,
        device=config["device"],
        checkpoints=lambda wc: f"results/poisson-eat/checkpoints/{wc.method}",
    script:
        ENTRY


rule poisson_eat_baseline:
    input:
        spikes=POISSON_EAT_DATA["spikes"],
        code=POISSON_EAT_CODE,
    output:
        "results/poisson-eat/runs/baseline_observed_glm.json",
    log:
        "logs/poisson-eat/baseline.log",
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.papers.poisson_eat.glm_baseline",
    script:
        ENTRY


rule poisson_eat_evaluate:
    input:
        fidelity=rules.poisson_eat_relaxations.output.fidelity,
        gradients=rules.poisson_eat_relaxations.output.gradients,
        runs=POISSON_EAT_RUNS,
        baseline=rules.poisson_eat_baseline.output[0],
        reported=repo_file("resources/poisson-eat/reported.yaml"),
        manifest=POISSON_EAT_DATA["manifest"],
        code=POISSON_EAT_CODE,
    output:
        metrics="results/poisson-eat/metrics.json",
        claims="results/poisson-eat/claims.json",
    log:
        "logs/poisson-eat/evaluate.log",
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.papers.poisson_eat.evaluate",
        settings=POISSON_EAT,
        scale=config["scale"],
    script:
        ENTRY


rule poisson_eat_figures:
    input:
        fidelity=rules.poisson_eat_relaxations.output.fidelity,
        gradients=rules.poisson_eat_relaxations.output.gradients,
        runs=POISSON_EAT_RUNS,
        baseline=rules.poisson_eat_baseline.output[0],
        spikes=POISSON_EAT_DATA["spikes"],
        code=POISSON_EAT_CODE,
    output:
        **{
            name: report(
                f"results/poisson-eat/figures/{name}.png",
                category="Poisson EAT",
                caption=f"../report/poisson-eat/{name}.rst",
            )
            for name in POISSON_EAT_FIGURES
        },
    log:
        "logs/poisson-eat/figures.log",
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.papers.poisson_eat.figures",
    script:
        ENTRY


rule poisson_eat:
    input:
        paper_targets("poisson-eat"),
        rules.poisson_eat_figures.output,
