"""cgmt-erm: Gaussian-universality breakdown in high-dimensional ERM (simulated designs, convex losses)."""

CGMT_ERM = paper_config("cgmt-erm")
CGMT_ERM_CODE = code_files("papers/cgmt_erm")
CGMT_ERM_STORE = "data/cgmt-erm/designs.zarr"
CGMT_ERM_FIGURES = ["projection_laws", "test_error", "regulariser"]


PAPER_DATA_MANIFESTS["cgmt-erm"] = ["data/cgmt-erm/manifest.json"]


rule cgmt_erm_data:
    input:
        code=CGMT_ERM_CODE,
    output:
        store=directory(CGMT_ERM_STORE),
        manifest="data/cgmt-erm/manifest.json",
    log:
        "logs/cgmt-erm/data.log",
    conda:
        "../../envs/core.yaml"
    threads: 1
    params:
        entry="repro.papers.cgmt_erm.data",
        settings=CGMT_ERM,
        seed=config["seed"],
    script:
        ENTRY


rule cgmt_erm_train:
    input:
        store=CGMT_ERM_STORE,
        code=CGMT_ERM_CODE,
    output:
        directory("results/cgmt-erm/fits/{design}.zarr"),
    log:
        "logs/cgmt-erm/train/{design}.log",
    wildcard_constraints:
        design="|".join(CGMT_ERM["designs"]),
    conda:
        "../../envs/core.yaml"
    threads: 4 if config["scale"] == "full" else 1
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        entry="repro.papers.cgmt_erm.train",
        settings=CGMT_ERM,
    script:
        ENTRY


rule cgmt_erm_evaluate:
    input:
        store=CGMT_ERM_STORE,
        fits=expand("results/cgmt-erm/fits/{design}.zarr", design=CGMT_ERM["designs"]),
        reported=repo_file("resources/cgmt-erm/reported.yaml"),
        code=CGMT_ERM_CODE,
    output:
        metrics="results/cgmt-erm/metrics.json",
        claims="results/cgmt-erm/claims.json",
        curves="results/cgmt-erm/laws.npz",
    log:
        "logs/cgmt-erm/evaluate.log",
    conda:
        "../../envs/core.yaml"
    resources:
        mem_mb=4000,
    params:
        entry="repro.papers.cgmt_erm.evaluate",
        settings=CGMT_ERM,
        scale=config["scale"],
    script:
        ENTRY


rule cgmt_erm_figures:
    input:
        metrics="results/cgmt-erm/metrics.json",
        curves="results/cgmt-erm/laws.npz",
        code=CGMT_ERM_CODE,
    output:
        **{
            name: report(
                f"results/cgmt-erm/figures/{name}.png",
                category="cgmt-erm",
                caption=f"../report/cgmt-erm/{name}.rst",
            )
            for name in CGMT_ERM_FIGURES
        },
    log:
        "logs/cgmt-erm/figures.log",
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.papers.cgmt_erm.figures",
        settings=CGMT_ERM,
    script:
        ENTRY


rule cgmt_erm:
    input:
        paper_targets("cgmt-erm"),
        rules.cgmt_erm_figures.output,
