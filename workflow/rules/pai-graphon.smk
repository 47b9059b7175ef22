"""pai-graphon: pruning-at-initialisation masks (Random, Magnitude, SNIP, GraSP) and their graphon limits."""

PAI_GRAPHON = paper_config("pai-graphon")
PAI_GRAPHON_CODE = code_files("papers/pai_graphon")
PAI_GRAPHON_DATASETS = ["synthetic", "digits"]
PAI_GRAPHON_FIGURES = ["graphons", "convergence", "degree_profiles", "alignment"]


PAPER_DATA_MANIFESTS["pai-graphon"] = ["data/pai-graphon/manifest.json"]


rule pai_graphon_data:
    input:
        code=PAI_GRAPHON_CODE,
    output:
        **{
            name: directory(f"data/pai-graphon/{name}.zarr")
            for name in PAI_GRAPHON_DATASETS
        },
        manifest="data/pai-graphon/manifest.json",
    log:
        "logs/pai-graphon/data.log",
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.papers.pai_graphon.data",
        settings=PAI_GRAPHON,
        seed=config["seed"],
    script:
        ENTRY


rule pai_graphon_masks:
    input:
        data="data/pai-graphon/{dataset}.zarr",
        code=PAI_GRAPHON_CODE,
    output:
        directory("results/pai-graphon/masks/{dataset}.zarr"),
    log:
        "logs/pai-graphon/masks/{dataset}.log",
    wildcard_constraints:
        dataset="|".join(PAI_GRAPHON_DATASETS),
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
        gpu=1 if config["scale"] == "full" else 0,
    params:
        entry="repro.papers.pai_graphon.masks",
        settings=PAI_GRAPHON,
        device=config["device"],
    script:
        ENTRY


rule pai_graphon_train:
    input:
        data="data/pai-graphon/synthetic.zarr",
        code=PAI_GRAPHON_CODE,
    output:
        "results/pai-graphon/train.json",
    log:
        "logs/pai-graphon/train.log",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
        gpu=1 if config["scale"] == "full" else 0,
    params:
        entry="repro.papers.pai_graphon.train",
        settings=PAI_GRAPHON,
        device=config["device"],
    script:
        ENTRY


rule pai_graphon_evaluate:
    input:
        masks_synthetic="results/pai-graphon/masks/synthetic.zarr",
        masks_digits="results/pai-graphon/masks/digits.zarr",
        data_synthetic="data/pai-graphon/synthetic.zarr",
        data_digits="data/pai-graphon/digits.zarr",
        train="results/pai-graphon/train.json",
        reported=repo_file("resources/pai-graphon/reported.yaml"),
        code=PAI_GRAPHON_CODE,
    output:
        metrics="results/pai-graphon/metrics.json",
        claims="results/pai-graphon/claims.json",
        graphons=directory("results/pai-graphon/graphons.zarr"),
    log:
        "logs/pai-graphon/evaluate.log",
    conda:
        "../../envs/core.yaml"
    resources:
        mem_mb=4000,
    params:
        entry="repro.papers.pai_graphon.evaluate",
        settings=PAI_GRAPHON,
        scale=config["scale"],
    script:
        ENTRY


rule pai_graphon_figures:
    input:
        metrics="results/pai-graphon/metrics.json",
        graphons="results/pai-graphon/graphons.zarr",
        code=PAI_GRAPHON_CODE,
    output:
        **{
            name: report(
                f"results/pai-graphon/figures/{name}.png",
                category="pai-graphon",
                caption=f"../report/pai-graphon/{name}.rst",
            )
            for name in PAI_GRAPHON_FIGURES
        },
    log:
        "logs/pai-graphon/figures.log",
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.papers.pai_graphon.figures",
        settings=PAI_GRAPHON,
    script:
        ENTRY


rule pai_graphon:
    input:
        paper_targets("pai-graphon"),
        rules.pai_graphon_figures.output,
