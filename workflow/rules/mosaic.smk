"""Mosaic: block-sparse attention, learned functional perturbations, fair-CRPS ensembles (ERA5 / shallow water)."""

MOSAIC = paper_config("mosaic")
MOSAIC_CODE = code_files("papers/mosaic")
MOSAIC_VARIANTS = ["mosaic", "dense", "mse"]
MOSAIC_FIGURES = ["spectral_ratio", "skill", "attention_cost"]


def mosaic_resources(stage):
    """Cluster resources of a stage from the paper's config (gpu only at full scale)."""
    res = dict(MOSAIC.get("resources", {}).get(stage, {}))
    res.pop("threads", None)
    res.setdefault("gpu", 0)
    return res


rule mosaic_train:
    input:
        store=ERA5_STORE,
        norm_stats=ERA5_OUT["norm_stats"],
        code=MOSAIC_CODE,
    output:
        model="results/mosaic/models/{variant}.pt",
        history="results/mosaic/models/{variant}_history.json",
    params:
        entry="repro.papers.mosaic.train",
        settings=MOSAIC,
        seed=config["seed"],
        device=config["device"],
        checkpoints="results/mosaic/checkpoints",
    wildcard_constraints:
        variant="mosaic|dense|mse",
    threads: MOSAIC.get("resources", {}).get("train", {}).get("threads", 1)
    resources:
        **mosaic_resources("train"),
    log:
        "logs/mosaic/train_{variant}.log",
    conda:
        "../../envs/torch.yaml"
    script:
        ENTRY


rule mosaic_attention_cost:
    input:
        code=MOSAIC_CODE,
    output:
        cost="results/mosaic/attention_cost.json",
    params:
        entry="repro.papers.mosaic.attention_cost",
        settings=MOSAIC,
        seed=config["seed"],
        device=config["device"],
    threads: 1
    resources:
        **mosaic_resources("evaluate"),
    log:
        "logs/mosaic/attention_cost.log",
    conda:
        "../../envs/torch.yaml"
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
    params:
        entry="repro.papers.mosaic.evaluate",
        settings=MOSAIC,
        seed=config["seed"],
        scale=config["scale"],
    threads: MOSAIC.get("resources", {}).get("evaluate", {}).get("threads", 1)
    resources:
        **mosaic_resources("evaluate"),
    log:
        "logs/mosaic/evaluate.log",
    conda:
        "../../envs/torch.yaml"
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
    params:
        entry="repro.papers.mosaic.figures",
        settings=MOSAIC,
    log:
        "logs/mosaic/figures.log",
    conda:
        "../../envs/core.yaml"
    script:
        ENTRY


rule mosaic:
    input:
        paper_targets("mosaic"),
        rules.mosaic_figures.output,
