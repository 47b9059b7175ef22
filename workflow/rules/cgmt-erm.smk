"""cgmt-erm: Gaussian-universality breakdown in high-dimensional ERM (simulated designs, convex losses)."""

CGMT_ERM = paper_config("cgmt-erm")
CGMT_ERM_CODE = code_files("papers/cgmt_erm")
CGMT_ERM_DATA = {
    "store": directory("data/cgmt-erm/designs.zarr"),
    "manifest": "data/cgmt-erm/manifest.json",
}
CGMT_ERM_FIGURES = ["projection_laws", "test_error", "regulariser"]


rule cgmt_erm_data:
    input:
        code=CGMT_ERM_CODE,
    output:
        **CGMT_ERM_DATA,
    params:
        entry="repro.papers.cgmt_erm.data",
        settings=CGMT_ERM,
        seed=config["seed"],
    threads: 1
    log:
        "logs/cgmt-erm/data.log",
    conda:
        "../../envs/core.yaml"
    script:
        ENTRY


rule cgmt_erm_train:
    input:
        store=CGMT_ERM_DATA["store"],
        code=CGMT_ERM_CODE,
    output:
        directory("results/cgmt-erm/fits/{design}.zarr"),
    params:
        entry="repro.papers.cgmt_erm.train",
        settings=CGMT_ERM,
    wildcard_constraints:
        design="|".join(CGMT_ERM["designs"]),
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    log:
        "logs/cgmt-erm/train/{design}.log",
    conda:
        "../../envs/core.yaml"
    script:
        ENTRY


rule cgmt_erm_evaluate:
    input:
        store=CGMT_ERM_DATA["store"],
        fits=expand("results/cgmt-erm/fits/{design}.zarr", design=CGMT_ERM["designs"]),
        code=CGMT_ERM_CODE,
    output:
        metrics="results/cgmt-erm/metrics.json",
        claims="results/cgmt-erm/claims.json",
        curves="results/cgmt-erm/laws.npz",
    params:
        entry="repro.papers.cgmt_erm.evaluate",
        settings=CGMT_ERM,
        scale=config["scale"],
    resources:
        mem_mb=4000,
    log:
        "logs/cgmt-erm/evaluate.log",
    conda:
        "../../envs/core.yaml"
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
    params:
        entry="repro.papers.cgmt_erm.figures",
        settings=CGMT_ERM,
    log:
        "logs/cgmt-erm/figures.log",
    conda:
        "../../envs/core.yaml"
    script:
        ENTRY


rule cgmt_erm:
    input:
        paper_targets("cgmt-erm"),
        rules.cgmt_erm_figures.output,
