"""BioDynaSpec: spatio-spectral autoregressive diffusion for protein MD (ATLAS), with baselines."""

BIODYNASPEC = paper_config("biodynaspec")
BIODYNASPEC_LEARNED = [m for m in BIODYNASPEC["models"] if m != "static"]
# In the smoke default (jobs.train: grouped) two training jobs, the spectral models and the baselines, run
# side by side on two cores; at full scale each model is its own job on its own GPU.
BIODYNASPEC_TRAIN_JOBS = job_groups(
    BIODYNASPEC,
    "train",
    [(m,) for m in BIODYNASPEC_LEARNED],
    key=lambda run: (
        ("spectral",) if run[0].startswith("biodynaspec") else ("baselines",)
    ),
)
BIODYNASPEC_DATA = {k: ATLAS_FILES[k] for k in ("processed", "meta", "splits")}
# Everything a model's shape and training read (generation and scoring read more, see evaluate).
BIODYNASPEC_MODEL_KEYS = [
    "window",
    "crop",
    "d_model",
    "layers",
    "heads",
    "irfc_kernels",
    "diffusion_steps",
    "flow_steps",
]


declare_paper(
    "biodynaspec",
    *[
        stage(
            stage_name("train", suffix),
            entry="repro.papers.biodynaspec.train",
            resources="train",
            input=BIODYNASPEC_DATA,
            output={
                f"model_{m}": f"results/biodynaspec/models/{m}.pt" for (m,) in models
            },
            env="torch",
            seed=True,
            settings=BIODYNASPEC_MODEL_KEYS
            + ["train_replicates", "epochs", "batches_per_epoch", "batch_size", "lr"],
            params={
                "checkpoints": "results/biodynaspec/checkpoints",
                "models": [m for (m,) in models],
            },
        )
        for suffix, models in BIODYNASPEC_TRAIN_JOBS.items()
    ],
    stage(
        "evaluate",
        input=BIODYNASPEC_DATA
        | {
            "models": expand(
                "results/biodynaspec/models/{model}.pt", model=BIODYNASPEC_LEARNED
            )
        },
        output={
            "metrics": "results/biodynaspec/metrics.json",
            "claims": "results/biodynaspec/claims.json",
            "samples": "results/biodynaspec/samples.npz",
        },
        env="torch",
        seed=True,
        settings=BIODYNASPEC_MODEL_KEYS
        + [
            "models",
            "heldout_replicates",
            "num_frames",
            "n_samples",
            "rs_report",
            "rs_include_first",
            "ensemble_size",
            "min_ensemble_frames",
            "pca_k",
            "psd_pcs",
            "synthetic_frames",
        ],
        reported=True,
    ),
    figures(
        ["rs_curve", "pca", "psd", "table"],
        input={
            "metrics": "results/biodynaspec/metrics.json",
            "samples": "results/biodynaspec/samples.npz",
        },
    ),
)
