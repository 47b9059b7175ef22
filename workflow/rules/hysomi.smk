"""HySoMi: constrained hybrid model of soil microbial dynamics from metagenome traits."""

HYSOMI = paper_config("hysomi")
HYSOMI_CODE = code_files("papers/hysomi")
HYSOMI_MAIN_METHODS = ["constrained", "unconstrained", "global", "blackbox"]
HYSOMI_CURVE_METHODS = ["constrained", "unconstrained"]
HYSOMI_FIGURES = [
    "trajectories",
    "parameter_recovery",
    "error_vs_ntrain",
    "equifinality",
]


def hysomi_runs():
    """(complexity, method, n_train) of every training job: all methods at the main size, a curve for two."""
    runs = set()
    for level in HYSOMI["complexity"]:
        runs |= {(level, m, HYSOMI["main_n_train"]) for m in HYSOMI_MAIN_METHODS}
        runs |= {(level, m, n) for m in HYSOMI_CURVE_METHODS for n in HYSOMI["n_train"]}
    return sorted(runs)


rule hysomi_train:
    input:
        traits=METAGENOME_OUT["traits"],
        observations=METAGENOME_OUT["observations"],
        constraints=METAGENOME_OUT["constraints"],
        code=HYSOMI_CODE,
    output:
        "results/hysomi/runs/{complexity}/{method}_n{n}.npz",
    params:
        entry="repro.papers.hysomi.train",
        settings=HYSOMI,
        device=config["device"],
        checkpoints="results/hysomi/checkpoints/{complexity}/{method}_n{n}",
    wildcard_constraints:
        complexity="L[123]",
        method="constrained|unconstrained|global|blackbox",
        n=r"\d+",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    log:
        "logs/hysomi/train/{complexity}/{method}_n{n}.log",
    conda:
        "../../envs/torch.yaml"
    script:
        ENTRY


rule hysomi_evaluate:
    input:
        runs=[f"results/hysomi/runs/{c}/{m}_n{n}.npz" for c, m, n in hysomi_runs()],
        traits=METAGENOME_OUT["traits"],
        observations=METAGENOME_OUT["observations"],
        params_true=METAGENOME_OUT["params_true"],
        constraints=METAGENOME_OUT["constraints"],
        code=HYSOMI_CODE,
    output:
        metrics="results/hysomi/metrics.json",
        claims="results/hysomi/claims.json",
    params:
        entry="repro.papers.hysomi.evaluate",
        settings=HYSOMI,
        scale=config["scale"],
    log:
        "logs/hysomi/evaluate.log",
    conda:
        "../../envs/torch.yaml"
    script:
        ENTRY


rule hysomi_figures:
    input:
        metrics="results/hysomi/metrics.json",
        runs=[f"results/hysomi/runs/{c}/{m}_n{n}.npz" for c, m, n in hysomi_runs()],
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
    params:
        entry="repro.papers.hysomi.figures",
        settings=HYSOMI,
    log:
        "logs/hysomi/figures.log",
    conda:
        "../../envs/core.yaml"
    script:
        ENTRY


rule hysomi:
    input:
        paper_targets("hysomi"),
        rules.hysomi_figures.output,
