"""BioDynaSpec: spatio-spectral autoregressive diffusion for protein MD (ATLAS), with baselines."""

import hashlib
import json

BIODYNASPEC = paper_config("biodynaspec")
BIODYNASPEC_CODE = code_files(
    "papers/biodynaspec", "data/atlas/layout.py", "data/atlas/splits.py"
)
BIODYNASPEC_LEARNED = [m for m in BIODYNASPEC["models"] if m != "static"]
# Cluster resources per stage: defaults, overridden by the config's resources section; GPUs at full scale.
BIODYNASPEC_RES = {
    stage: {
        "mem_mb": 4000 if stage == "train" else 8000,
        "runtime": 60,
        "gpu": 1 if config["scale"] == "full" else 0,
        **BIODYNASPEC.get("resources", {}).get(stage, {}),
    }
    for stage in ("train", "evaluate")
}
BIODYNASPEC_FIGURES = ["rs_curve", "pca", "psd", "table"]
# Checkpoints are keyed by settings, seed and code so that a change never resumes a stale run.
BIODYNASPEC_KEY = hashlib.sha256(
    json.dumps([BIODYNASPEC, config["seed"]], sort_keys=True).encode()
    + b"".join(Path(f).read_bytes() for f in BIODYNASPEC_CODE)
).hexdigest()[:10]


rule biodynaspec_train:
    input:
        processed=ATLAS_FILES["processed"],
        meta=ATLAS_FILES["meta"],
        splits=ATLAS_FILES["splits"],
        code=BIODYNASPEC_CODE,
    output:
        model="results/biodynaspec/models/{model}.pt",
    log:
        "logs/biodynaspec/train_{model}.log",
    wildcard_constraints:
        model="|".join(BIODYNASPEC_LEARNED),
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=BIODYNASPEC_RES["train"]["mem_mb"],
        runtime=BIODYNASPEC_RES["train"]["runtime"],
        gpu=BIODYNASPEC_RES["train"]["gpu"],
    params:
        entry="repro.papers.biodynaspec.train",
        settings=BIODYNASPEC,
        seed=config["seed"],
        checkpoint=f"results/biodynaspec/checkpoints/{{model}}_{BIODYNASPEC_KEY}.ckpt",
    script:
        ENTRY


rule biodynaspec_evaluate:
    input:
        models=expand(
            "results/biodynaspec/models/{model}.pt", model=BIODYNASPEC_LEARNED
        ),
        processed=ATLAS_FILES["processed"],
        meta=ATLAS_FILES["meta"],
        splits=ATLAS_FILES["splits"],
        reported=repo_file("resources/biodynaspec/reported.yaml"),
        code=BIODYNASPEC_CODE,
    output:
        metrics="results/biodynaspec/metrics.json",
        claims="results/biodynaspec/claims.json",
        samples="results/biodynaspec/samples.npz",
    log:
        "logs/biodynaspec/evaluate.log",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=BIODYNASPEC_RES["evaluate"]["mem_mb"],
        runtime=BIODYNASPEC_RES["evaluate"]["runtime"],
        gpu=BIODYNASPEC_RES["evaluate"]["gpu"],
    params:
        entry="repro.papers.biodynaspec.evaluate",
        settings=BIODYNASPEC,
        scale=config["scale"],
        seed=config["seed"],
    script:
        ENTRY


rule biodynaspec_figures:
    input:
        metrics="results/biodynaspec/metrics.json",
        samples="results/biodynaspec/samples.npz",
        code=BIODYNASPEC_CODE,
    output:
        **{
            name: report(
                f"results/biodynaspec/figures/{name}.png",
                category="BioDynaSpec",
                caption=f"../report/biodynaspec/{name}.rst",
            )
            for name in BIODYNASPEC_FIGURES
        },
        table_md="results/biodynaspec/metrics_table.md",
    log:
        "logs/biodynaspec/figures.log",
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.papers.biodynaspec.figures",
    script:
        ENTRY


rule biodynaspec:
    input:
        paper_targets("biodynaspec"),
        rules.biodynaspec_figures.output,
