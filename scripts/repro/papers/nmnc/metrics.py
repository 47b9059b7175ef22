"""NMNC's metrics from the training stage's runs (numpy only): per seed and method, reduced as the claims
and figures read them."""

from __future__ import annotations

import numpy as np

COSINE_METHODS = ("vnc", "nmnc", "random")


def slope(widths: list[int], values: list[float]) -> float:
    """Least-squares slope of log(value) against log(width)."""
    return float(np.polyfit(np.log(widths), np.log(values), 1)[0])


def summarise(runs: dict, s: dict) -> dict:
    k, budget = str(s["manifold"]["k"]), s["learn"]["n_perturb"]
    widths = s["widths"]["widths"]
    per_seed = []
    for run in runs["runs"]:
        layers = run["alignment"]["layers"]
        cos = run["cosines"]
        n_layers = len(layers)
        cosines = {m: [cos[f"{li}/{m}/{budget}"]["activation"] for li in range(n_layers)] for m in COSINE_METHODS}
        pr_last = [run["widths"][str(w)]["participation_ratio"][-1] for w in widths]
        per_seed.append(
            {
                "seed": run["seed"],
                "bp_pretrained_test_accuracy": run["pretrained_test_accuracy"],
                "rho_k": [layer["rho"][k] for layer in layers],
                "rho_k_random": [layer["rho_random"][k] for layer in layers],
                "k_over_n": [int(k) / layer["n"] for layer in layers],
                "mean_principal_cos2": [float(np.mean(np.square(layer["principal_cosines"]))) for layer in layers],
                "participation_ratio": [layer["participation_ratio"] for layer in layers],
                "cosine": cosines,
                "cosine_margin": float(
                    np.min(np.array(cosines["nmnc"]) - np.maximum(cosines["vnc"], cosines["random"]))
                ),
                "test_accuracy": {m: v["test_accuracy"] for m, v in run["learning"].items()},
                "pr_width_slope": slope(widths, pr_last),
                "pr_by_width": pr_last,
                "rnn": run["rnn"],
                "rnn_cosine_margin": float(
                    run["rnn"]["cosine"]["nmnc"] - max(run["rnn"]["cosine"]["vnc"], run["rnn"]["cosine"]["random"])
                ),
            }
        )
    return {
        "settings": {"k": int(k), "n_perturb": budget, "widths": widths, "budgets": s["perturb"]["budgets"]},
        "unbiased_cosine": runs["unbiased_cosine"],
        "per_seed": per_seed,
    }
