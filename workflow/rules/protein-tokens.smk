"""APT: adaptive (global, coarse-to-fine) protein structure tokenization (arXiv 2602.06418, ICML 2026)."""

PROTEIN_TOKENS_WINDOWS = "results/protein-tokens/data/windows.npz"
PROTEIN_TOKENS_TRAINED = {
    "outputs": "results/protein-tokens/outputs.npz",
    "training": "results/protein-tokens/training.json",
}


declare_paper(
    "protein-tokens",
    stage(
        "data",
        input={"chains": "data/structures/chains.parquet"},
        output={
            "windows": PROTEIN_TOKENS_WINDOWS,
            "manifest": "results/protein-tokens/data/manifest.json",
        },
        env="md",
        settings=["windows"],
    ),
    stage(
        "train",
        input={"windows": PROTEIN_TOKENS_WINDOWS},
        output=PROTEIN_TOKENS_TRAINED,
        env="torch",
        seed=True,
        settings=["model", "train", "loss", "variants", "seeds", "shrink", "checks"],
    ),
    stage(
        "evaluate",
        input={"windows": PROTEIN_TOKENS_WINDOWS} | PROTEIN_TOKENS_TRAINED,
        output={
            "metrics": "results/protein-tokens/metrics.json",
            "claims": "results/protein-tokens/claims.json",
        },
        env="md",
        settings=["model", "variants", "shrink", "probe"],
        reported=True,
    ),
    figures(
        ["rmsd_vs_tokens", "comparisons", "decoded"],
        input={
            "windows": PROTEIN_TOKENS_WINDOWS,
            "metrics": "results/protein-tokens/metrics.json",
            "outputs": "results/protein-tokens/outputs.npz",
        },
    ),
    manifests=["results/protein-tokens/data/manifest.json"],
)
