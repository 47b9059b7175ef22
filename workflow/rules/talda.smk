"""TALDA: Lyapunov-designed descent-ascent on two-sided PL minimax problems (ICML 2026 poster 63719)."""

TALDA = paper_config("talda")
TALDA_CODE = code_files("papers/talda")
TALDA_DATA = {
    "quadratic": "results/talda/data/quadratic.npz",
    "robust_ls": "results/talda/data/robust_ls.npz",
    "yang": "results/talda/data/yang.npz",
    "manifest": "results/talda/data/manifest.json",
}
TALDA_FIGURES = ["convergence", "rates", "lyapunov"]


PAPER_DATA_MANIFESTS["talda"] = [TALDA_DATA["manifest"]]


rule talda_data:
    input:
        code=TALDA_CODE,
    output:
        **TALDA_DATA,
    log:
        "logs/talda/data.log",
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.papers.talda.data",
        settings=TALDA,
    script:
        ENTRY


rule talda_train:
    input:
        quadratic=TALDA_DATA["quadratic"],
        robust_ls=TALDA_DATA["robust_ls"],
        yang=TALDA_DATA["yang"],
        code=TALDA_CODE,
    output:
        directory("results/talda/runs.zarr"),
    log:
        "logs/talda/train.log",
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=TALDA.get("resources", {}).get("train", {}).get("mem_mb", 2000),
        runtime=TALDA.get("resources", {}).get("train", {}).get("runtime", 30),
    params:
        entry="repro.papers.talda.optimize",
        settings=TALDA,
    script:
        ENTRY


rule talda_evaluate:
    input:
        runs="results/talda/runs.zarr",
        reported=repo_file("resources/talda/reported.yaml"),
        manifest=TALDA_DATA["manifest"],
        code=TALDA_CODE,
    output:
        metrics="results/talda/metrics.json",
        claims="results/talda/claims.json",
    log:
        "logs/talda/evaluate.log",
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.papers.talda.evaluate",
        settings=TALDA,
        scale=config["scale"],
    script:
        ENTRY


rule talda_figures:
    input:
        runs="results/talda/runs.zarr",
        metrics="results/talda/metrics.json",
        code=TALDA_CODE,
    output:
        **{
            name: report(
                f"results/talda/figures/{name}.png",
                category="TALDA",
                caption=f"../report/talda/{name}.rst",
            )
            for name in TALDA_FIGURES
        },
    log:
        "logs/talda/figures.log",
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.papers.talda.figures",
    script:
        ENTRY


rule talda:
    input:
        paper_targets("talda"),
        rules.talda_figures.output,
