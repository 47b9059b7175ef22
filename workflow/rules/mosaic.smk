"""Mosaic: block-sparse attention, learned functional perturbations, fair-CRPS ensembles (ERA5 / shallow water)."""

MOSAIC = paper_config("mosaic")
MOSAIC_CODE = code_files("papers/mosaic")
MOSAIC_VARIANTS = ["mosaic", "dense", "mse"]
MOSAIC_FIGURES = ["spectral_ratio", "skill", "attention_cost"]


# Cluster resources per stage from the paper's config (gpu: 1 only in config/full.yaml).
MOSAIC_STAGES = {
    stage: MOSAIC.get("resources", {}).get(stage, {}) for stage in ("train", "evaluate")
}
MOSAIC_RESOURCES = {
    stage: {"gpu": 0} | {k: v for k, v in res.items() if k != "threads"}
    for stage, res in MOSAIC_STAGES.items()
}
MOSAIC_THREADS = {stage: res.get("threads", 1) for stage, res in MOSAIC_STAGES.items()}


rule mosaic_train:
    input:
        store=ERA5_STORE,
        norm_stats=ERA5_OUT["norm_stats"],
        code=MOSAIC_CODE,
    output:
        model="results/mosaic/models/{variant}.pt",
        history="results/mosaic/models/{variant}_history.json",
    log:
        "logs/mosaic/train_{variant}.log",
    wildcard_constraints:
        variant="mosaic|dense|mse",
    conda:
        "../../envs/torch.yaml"
    threads: MOSAIC_THREADS["train"]
    resources:
        **MOSAIC_RESOURCES["train"],
    params:
        entry="repro.papers.mosaic.train",
        settings=MOSAIC,
        seed=config["seed"],
        device=config["device"],
        checkpoints="results/mosaic/checkpoints",
    script:
        ENTRY


rule mosaic_attention_cost:
    input:
        code=MOSAIC_CODE,
    output:
        cost="results/mosaic/attention_cost.json",
    log:
        "logs/mosaic/attention_cost.log",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        **MOSAIC_RESOURCES["evaluate"],
    params:
        entry="repro.papers.mosaic.attention_cost",
        settings=MOSAIC,
        seed=config["seed"],
        device=config["device"],
    script:
        ENTRY


rule mosaic_evaluate:
    input:
        **{v: f"results/mosaic/models/{v}.pt" for v in MOSAIC_VARIANTS},
        store=ERA5_STORE,
        norm_stats=ERA5_OUT["norm_stats"],
        sample=ERA5_SAMPLE,
        code=MOSAIC_CODE,
    output:
        **{
            f"forecast_{v}": directory(f"results/mosaic/forecasts/{v}.zarr")
            for v in MOSAIC_VARIANTS
        },
        metrics="results/mosaic/metrics.json",
        claims="results/mosaic/claims.json",
    log:
        "logs/mosaic/evaluate.log",
    conda:
        "../../envs/torch.yaml"
    threads: MOSAIC_THREADS["evaluate"]
    resources:
        **MOSAIC_RESOURCES["evaluate"],
    params:
        entry="repro.papers.mosaic.evaluate",
        settings=MOSAIC,
        seed=config["seed"],
        scale=config["scale"],
    script:
        ENTRY


rule mosaic_figures:
    input:
        metrics="results/mosaic/metrics.json",
        cost="results/mosaic/attention_cost.json",
        code=MOSAIC_CODE,
    output:
        **{
            name: report(
                f"results/mosaic/figures/{name}.png",
                category="Mosaic",
                caption=f"../report/mosaic/{name}.rst",
            )
            for name in MOSAIC_FIGURES
        },
    log:
        "logs/mosaic/figures.log",
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.papers.mosaic.figures",
        settings=MOSAIC,
    script:
        ENTRY


rule mosaic:
    input:
        paper_targets("mosaic"),
        rules.mosaic_figures.output,
