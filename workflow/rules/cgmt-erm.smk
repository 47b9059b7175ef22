"""cgmt-erm: Gaussian-universality breakdown in high-dimensional ERM (simulated designs, convex losses)."""

CGMT_ERM_STORE = "data/cgmt-erm/designs.zarr"
CGMT_ERM_MODEL = [
    "designs",
    "p",
    "p_sweep",
    "ratios",
    "main_ratio",
    "losses",
    "lam",
    "huber",
]


declare_paper(
    "cgmt-erm",
    stage(
        "data",
        output={
            "store": directory(CGMT_ERM_STORE),
            "manifest": "data/cgmt-erm/manifest.json",
        },
        seed=True,
        settings=[
            "designs",
            "p",
            "p_sweep",
            "ratios",
            "reps",
            "n_test",
            "mixture_norm",
            "spike_strength",
            "t_dof",
            "label_noise",
            "ridge_check",
        ],
    ),
    stage(
        "train",
        input={"store": CGMT_ERM_STORE},
        output={"fits": directory("results/cgmt-erm/fits/{design}.zarr")},
        constraints={"design": "|".join(paper_config("cgmt-erm")["designs"])},
        settings=CGMT_ERM_MODEL,
    ),
    stage(
        "evaluate",
        input={
            "store": CGMT_ERM_STORE,
            "fits": expand(
                "results/cgmt-erm/fits/{design}.zarr",
                design=paper_config("cgmt-erm")["designs"],
            ),
        },
        output={
            "metrics": "results/cgmt-erm/metrics.json",
            "claims": "results/cgmt-erm/claims.json",
            "curves": "results/cgmt-erm/laws.npz",
        },
        settings=CGMT_ERM_MODEL + ["ks", "test_error_tol", "folds"],
        reported=True,
    ),
    figures(
        ["projection_laws", "test_error", "regulariser"],
        input={
            "metrics": "results/cgmt-erm/metrics.json",
            "curves": "results/cgmt-erm/laws.npz",
        },
        settings=["losses", "huber", "ratios"],
    ),
    manifests=["data/cgmt-erm/manifest.json"],
)
