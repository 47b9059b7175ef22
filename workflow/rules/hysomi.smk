"""HySoMi: constrained hybrid model of soil microbial dynamics from metagenome traits."""

HYSOMI = paper_config("hysomi")
HYSOMI_CODE = code_files("papers/hysomi")
HYSOMI_METHODS = ["constrained", "unconstrained", "global", "blackbox"]
HYSOMI_FIGURES = [
    "trajectories",
    "parameter_recovery",
    "error_vs_ntrain",
    "equifinality",
]


HYSOMI_RUNS = expand(
    "results/hysomi/runs/{complexity}/{method}.npz",
    complexity=HYSOMI["complexity"],
    method=HYSOMI_METHODS,
)


rule hysomi_train:
    input:
        traits=METAGENOME_OUT["traits"],
        observations=METAGENOME_OUT["observations"],
        constraints=METAGENOME_OUT["constraints"],
        code=HYSOMI_CODE,
    output:
        "results/hysomi/runs/{complexity}/{method}.npz",
    log:
        "logs/hysomi/train/{complexity}/{method}.log",
    wildcard_constraints:
        complexity="L[123]",
        method="constrained|unconstrained|global|blackbox",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 2000 * attempt,
        runtime=60,
        gpu=1 if config["scale"] == "full" else 0,
    params:
        entry="repro.papers.hysomi.train",
        settings=HYSOMI,
        seed=config["seed"],
        device=config["device"],
        checkpoints="results/hysomi/checkpoints/{complexity}/{method}",
    script:
        ENTRY


rule hysomi_evaluate:
    input:
        runs=HYSOMI_RUNS,
        traits=METAGENOME_OUT["traits"],
        observations=METAGENOME_OUT["observations"],
        params_true=METAGENOME_OUT["params_true"],
        constraints=METAGENOME_OUT["constraints"],
        code=HYSOMI_CODE,
    output:
        metrics="results/hysomi/metrics.json",
        claims="results/hysomi/claims.json",
    log:
        "logs/hysomi/evaluate.log",
    conda:
        "../../envs/torch.yaml"
    params:
        entry="repro.papers.hysomi.evaluate",
        settings=HYSOMI,
        scale=config["scale"],
    script:
        ENTRY


rule hysomi_figures:
    input:
        metrics="results/hysomi/metrics.json",
        runs=HYSOMI_RUNS,
        observations=METAGENOME_OUT["observations"],
        params_true=METAGENOME_OUT["params_true"],
        traits=METAGENOME_OUT["traits"],
        code=HYSOMI_CODE,
    output:
        **{
            name: report(
                f"results/hysomi/figures/{name}.png",
                category="HySoMi",
                caption=f"../report/hysomi/{name}.rst",
            )
            for name in HYSOMI_FIGURES
        },
    log:
        "logs/hysomi/figures.log",
    conda:
        "../../envs/torch.yaml"
    params:
        entry="repro.papers.hysomi.figures",
        settings=HYSOMI,
    script:
        ENTRY


rule hysomi:
    input:
        paper_targets("hysomi"),
        rules.hysomi_figures.output,
