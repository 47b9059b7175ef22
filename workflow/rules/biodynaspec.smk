"""BioDynaSpec: spatio-spectral autoregressive diffusion for protein MD (ATLAS), with baselines."""

import hashlib
import json

BIODYNASPEC = paper_config("biodynaspec")
BIODYNASPEC_CODE = code_files("papers/biodynaspec", "data/atlas/layout.py", "data/atlas/splits.py")
BIODYNASPEC_LEARNED = [m for m in BIODYNASPEC["models"] if m != "static"]
BIODYNASPEC_RES = BIODYNASPEC.get("resources", {})
BIODYNASPEC_FIGURES = ["rs_curve", "pca", "psd", "table"]
# Checkpoints are keyed by settings, seed and code so that a change never resumes a stale run.
BIODYNASPEC_KEY = hashlib.sha256(
    json.dumps([BIODYNASPEC, config["seed"]], sort_keys=True).encode()
    + b"".join(Path(f).read_bytes() for f in BIODYNASPEC_CODE)
).hexdigest()[:10]


def biodynaspec_resources(stage, **defaults):
    """Cluster resources of a stage: config overrides, GPUs only at full scale."""
    res = {**defaults, **BIODYNASPEC_RES.get(stage, {})}
    res.setdefault("gpu", 1 if config["scale"] == "full" else 0)
    return res


rule biodynaspec_train:
    input:
        processed=ATLAS_OUT["processed"],
        meta=ATLAS_OUT["meta"],
        splits=ATLAS_OUT["splits"],
        code=BIODYNASPEC_CODE,
    output:
        model="results/biodynaspec/models/{model}.pt",
    params:
        entry="repro.papers.biodynaspec.train",
        settings=BIODYNASPEC,
        seed=config["seed"],
        checkpoint=f"results/biodynaspec/checkpoints/{{model}}_{BIODYNASPEC_KEY}.ckpt",
    wildcard_constraints:
        model="|".join(BIODYNASPEC_LEARNED),
    threads: 1
    resources:
        mem_mb=biodynaspec_resources("train", mem_mb=4000)["mem_mb"],
        runtime=biodynaspec_resources("train", runtime=60)["runtime"],
        gpu=biodynaspec_resources("train")["gpu"],
    log:
        "logs/biodynaspec/train_{model}.log",
    conda:
        "../../envs/torch.yaml"
    script:
        ENTRY


rule biodynaspec_evaluate:
    input:
        models=expand("results/biodynaspec/models/{model}.pt", model=BIODYNASPEC_LEARNED),
        processed=ATLAS_OUT["processed"],
        meta=ATLAS_OUT["meta"],
        splits=ATLAS_OUT["splits"],
        reported=repo_file("resources/biodynaspec/reported.yaml"),
        code=BIODYNASPEC_CODE,
    output:
        metrics="results/biodynaspec/metrics.json",
        claims="results/biodynaspec/claims.json",
        samples="results/biodynaspec/samples.npz",
    params:
        entry="repro.papers.biodynaspec.evaluate",
        settings=BIODYNASPEC,
        scale=config["scale"],
        seed=config["seed"],
    threads: 1
    resources:
        mem_mb=biodynaspec_resources("evaluate", mem_mb=8000)["mem_mb"],
        runtime=biodynaspec_resources("evaluate", runtime=60)["runtime"],
        gpu=biodynaspec_resources("evaluate")["gpu"],
    log:
        "logs/biodynaspec/evaluate.log",
    conda:
        "../../envs/torch.yaml"
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
    params:
        entry="repro.papers.biodynaspec.figures",
    log:
        "logs/biodynaspec/figures.log",
    conda:
        "../../envs/core.yaml"
    script:
        ENTRY


rule biodynaspec:
    input:
        paper_targets("biodynaspec"),
        rules.biodynaspec_figures.output,
