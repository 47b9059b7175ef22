"""APT: adaptive (global, coarse-to-fine) protein structure tokenization (arXiv 2602.06418, ICML 2026)."""

# folders of .npy arrays (repro.papers.protein_tokens.arrays): read lazily, written batch by batch
PROTEIN_TOKENS_WINDOWS = "results/protein-tokens/data/windows"
PROTEIN_TOKENS_TRAINED = {
    "outputs": "results/protein-tokens/outputs",
    "training": "results/protein-tokens/training.json",
}


declare_paper(
    "protein-tokens",
    stage(
        "data",
        input={"chains": "data/structures/chains.parquet"},
        output={
            "windows": directory(PROTEIN_TOKENS_WINDOWS),
            "manifest": "results/protein-tokens/data/manifest.json",
        },
        env="md",
        settings=["windows"],
    ),
    stage(
        "train",
        input={"windows": PROTEIN_TOKENS_WINDOWS},
        output={
            "outputs": directory(PROTEIN_TOKENS_TRAINED["outputs"]),
            "training": PROTEIN_TOKENS_TRAINED["training"],
        },
        env="torch",
        seed=True,
        cache="omit-software",
        settings=[
            "model",
            "train",
            "loss",
            "variants",
            "seeds",
            "shrink",
            "checks",
            "inference",
        ],
    ),
    stage(
        "evaluate",
        input={"windows": PROTEIN_TOKENS_WINDOWS} | PROTEIN_TOKENS_TRAINED,
        output={
            "metrics": "results/protein-tokens/metrics.json",
            "claims": "results/protein-tokens/claims.json",
        },
        env="md",
        settings=["model", "variants", "shrink", "probe", "inference"],
        reported=True,
    ),
    figures(
        ["rmsd_vs_tokens", "comparisons", "decoded"],
        input={
            "windows": PROTEIN_TOKENS_WINDOWS,
            "metrics": "results/protein-tokens/metrics.json",
            "outputs": PROTEIN_TOKENS_TRAINED["outputs"],
        },
    ),
    manifests=["results/protein-tokens/data/manifest.json"],
)
