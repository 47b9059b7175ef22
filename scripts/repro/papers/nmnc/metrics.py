"""NMNC's metrics from the training stage's runs (numpy only): per seed and method, reduced as the claims
and figures read them."""

from __future__ import annotations

import numpy as np

COSINE_METHODS = ("vnc", "nmnc", "random")


def slope(widths: list[int], values: list[float]) -> float:
    """Least-squares slope of log(value) against log(width); NaN with fewer than two widths."""
    if len(widths) < 2:
        return float("nan")
    return float(np.polyfit(np.log(widths), np.log(values), 1)[0])


def learning_errors(runs: dict) -> dict:
    """Per test item: 0/1 error (mean over seeds) of the backprop-pretrained MLP, the RNN and every method
    trained from scratch, and of the class prior (the most frequent training label)."""
    y = np.asarray(runs["test_labels"])
    out = {"trivial": (y != runs["prior_class"]).astype(float).tolist()}

    def mean_error(hits: list) -> list[float]:
        return (1.0 - np.mean(np.asarray(hits, dtype=float), axis=0)).tolist()

    out["bp_pretrained"] = mean_error([r["pretrained_test_correct"] for r in runs["runs"]])
    out["rnn"] = mean_error([r["rnn"]["test_correct"] for r in runs["runs"]])
    out["width_nets"] = mean_error([r["widths"][w]["test_correct"] for r in runs["runs"] for w in r["widths"]])
    for method in runs["runs"][0]["learning"]:
        out[method] = mean_error([r["learning"][method]["test_correct"] for r in runs["runs"]])
    return out


def summarise(runs: dict, s: dict) -> dict:
    k, budget = str(s["manifold"]["k"]), s["learn"]["n_perturb"]
    # The width sweep's dimension claim uses only widths up to the input dimension: above it the input's rank,
    # not the network, caps the activity's dimension (the sub-linear growth would hold by construction).
    widths = [w for w in s["widths"]["widths"] if w <= runs["n_in"]]
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
                "nmnc_margin_over_vnc_and_readout": float(
                    run["learning"]["nmnc"]["test_accuracy"]
                    - np.max([run["learning"][m]["test_accuracy"] for m in ("vnc", "readout") if m in run["learning"]])
                ),
                "pr_width_slope": slope(widths, pr_last),
                "pr_by_width": pr_last,
                "rnn": {k: v for k, v in run["rnn"].items() if k != "test_correct"},
                "rnn_cosine_margin": float(
                    run["rnn"]["cosine"]["nmnc"] - max(run["rnn"]["cosine"]["vnc"], run["rnn"]["cosine"]["random"])
                ),
            }
        )
    return {
        "learning": learning_errors(runs),
        "n_in": runs["n_in"],
        "settings": {"k": int(k), "n_perturb": budget, "widths": widths, "budgets": s["perturb"]["budgets"]},
        "unbiased_cosine": runs["unbiased_cosine"],
        "per_seed": per_seed,
    }
