"""Stage: per seed, fit SSCA (learned Gaussianization, block-spectral start, projectors trained with the
sliced-Wasserstein loss to the Gaussian hub), its three ablations and the baselines on a random split of the
warped views; measure retrieval, subspace stability, Davis-Kahan diagnostics, hub coupling, cycle audit and the
calibrated gate across the drift sweep, with and without the learned Gaussianization.

Methods (all on the same split; retrieval is view a -> view b of the first two views by cosine similarity):
- ``ssca``: learned Gaussianization -> block-spectral projections -> trained to the SW hub;
- ``minus_sw_hub``: the same block-spectral projections, not trained (no hub term);
- ``minus_spectral``: learned Gaussianization -> random orthonormal start -> trained to the SW hub;
- ``no_gaussianization``: standardised raw views -> block-spectral projections -> trained to the SW hub;
- ``infonce``, ``cca`` (raw views) and ``cca_hard_rank`` (hard-rank Gaussianized views): baselines.
"""

from __future__ import annotations

import numpy as np

from repro.papers.ssca import gate, hub, learned, spectral
from repro.papers.ssca.baselines import fit_infonce
from repro.papers.ssca.gaussianize import gaussianize
from repro.papers.ssca.metrics import pair_ranks, recall_at_k
from repro.workflow.io import InputError, write_json
from repro.workflow.progress import Progress

TRAINED = ("ssca", "minus_spectral", "no_gaussianization", "infonce")


def load(path: str, views: list[str]) -> dict[str, np.ndarray]:
    try:
        data = dict(np.load(path))
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot read the views archive ({err})") from err
    missing = [k for v in views for k in (v, f"{v}_warped") if k not in data] + [
        k for k in ("gene", "lipid") if k not in data
    ]
    if missing:
        raise InputError(path, f"missing arrays {missing}")
    return data


def standardise(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    mu, sd = train.mean(0), np.maximum(train.std(0), 1e-12)
    return [(x - mu) / sd for x in (train, *others)]


def both_ways(za: np.ndarray, zb: np.ndarray) -> dict[str, float]:
    """Recall@K a->b and b->a and their R@1 mean."""
    ab, ba = recall_at_k(za, zb), recall_at_k(zb, za)
    return {**{f"{k} a->b": v for k, v in ab.items()}, **{f"{k} b->a": v for k, v in ba.items()}} | {
        "R@1": (ab["R@1"] + ba["R@1"]) / 2
    }


def project(views: list[np.ndarray], maps: list[np.ndarray]) -> list[np.ndarray]:
    return [x @ w for x, w in zip(views, maps)]


def evaluate_maps(maps: list[np.ndarray], test: list[np.ndarray]) -> dict:
    """Retrieval of the first two views and the per-query normalised rank of the true pair (the learning-check
    items: 0 is the pair ranked first, about 0.5 a random ranking)."""
    z = project(test, maps)
    return {"retrieval": both_ways(z[0], z[1]), "pair_rank": (pair_ranks(z[0], z[1]) / len(z[0])).tolist()}


def spectral_start(train: list[np.ndarray], full: list[np.ndarray], cfg: dict) -> tuple[list[np.ndarray], dict]:
    """Block-spectral projections of the training rows and the Davis-Kahan diagnostics against all rows."""
    m_train, whiten = spectral.block_matrix(train, cfg["ridge"])
    m_full, _ = spectral.block_matrix(full, cfg["ridge"])
    return spectral.projections(m_train, whiten, cfg["k"]), spectral.davis_kahan(m_full, m_train, cfg["k"])


def gate_rates(clean: list[np.ndarray], drifted: dict[str, list[np.ndarray]], rng, cfg: dict, held) -> dict:
    """Per drift and alpha: false alarms on clean held-out batches and misses on drifted ones. Calibration and
    test batches are independent draws from the same held-out rows, so their scores are exchangeable."""
    b = cfg["batch"]

    def scores(views, n):
        return np.array([gate.statistic([v[rng.choice(held, b, replace=False)] for v in views]) for _ in range(n)])

    cal = scores(clean, cfg["n_calibration"])
    fresh = scores(clean, cfg["n_test"])
    out = {}
    for size, views in drifted.items():
        shifted = scores(views, cfg["n_test"])
        out[size] = {}
        for alpha in cfg["alphas"]:
            t = gate.conformal_threshold(cal, alpha)
            out[size][str(alpha)] = {
                "false_alarms": int(np.sum(fresh > t)),
                "misses": int(np.sum(shifted <= t)),
                "n": fresh.size,
            }
    return out


def one_seed(data: dict, views: list[str], cfg: dict, seed: int) -> dict:
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng([cfg["split_seed"], seed])
    n = data["label"].size
    order = rng.permutation(n)
    n_train = int(cfg["train_share"] * n)
    tr, te = order[:n_train], order[n_train:]
    warped = [data[f"{v}_warped"] for v in views]
    g_cfg, p_cfg = cfg["gaussianize"], cfg["projectors"]

    # learned Gaussianization, fitted on the training rows of each view
    gaussianizers, gauss_history = [], []
    for x in warped:
        model, history = learned.fit_gaussianizer(x[tr], g_cfg["units"], g_cfg["steps"], g_cfg["lr"])
        gaussianizers.append(model)
        gauss_history.append(history)
    gauss = [learned.apply(model, x) for model, x in zip(gaussianizers, warped)]
    robust = [(x - c) / s for x, (c, s) in ((x, learned.robust_scale(x[tr])) for x in warped)]
    result: dict = {
        "seed": seed,
        "gaussianization": {
            "final_loss": [h[-1] for h in gauss_history],
            "heldout_w2": np.concatenate([learned.marginal_w2(torch.as_tensor(g[te])).numpy() for g in gauss]).tolist(),
            "heldout_w2_zscore": np.concatenate(
                [learned.marginal_w2(torch.as_tensor(r[te])).numpy() for r in robust]
            ).tolist(),
        },
    }

    g_split = [standardise(g[tr], g[te], g) for g in gauss]
    raw_split = [standardise(x[tr], x[te], x) for x in warped]
    g_train, g_test, g_full = (list(s) for s in zip(*g_split))
    r_train, r_test, r_full = (list(s) for s in zip(*raw_split))
    dims = [x.shape[1] for x in warped]

    start, dk = spectral_start(g_train, g_full, cfg)
    ssca_maps, ssca_history = learned.train_projectors(g_train, start, p_cfg, np.random.default_rng([seed, 1]))
    result["ssca"] = evaluate_maps(ssca_maps, g_test) | {"davis_kahan": dk, "history": ssca_history[-1]}
    result["minus_sw_hub"] = evaluate_maps(start, g_test)
    random_maps = learned.random_start(np.random.default_rng([seed, 2]), dims, cfg["k"])
    spec_free, _ = learned.train_projectors(g_train, random_maps, p_cfg, np.random.default_rng([seed, 1]))
    result["minus_spectral"] = evaluate_maps(spec_free, g_test)
    raw_start, raw_dk = spectral_start(r_train, r_full, cfg)
    raw_maps, _ = learned.train_projectors(r_train, raw_start, p_cfg, np.random.default_rng([seed, 1]))
    result["no_gaussianization"] = evaluate_maps(raw_maps, r_test) | {"davis_kahan": raw_dk}
    # the learning checks' trivial predictor: the random start, untrained, on the raw views
    result["untrained"] = evaluate_maps(random_maps, r_test)

    z = project(g_test, ssca_maps)
    weights = hub.dependence_weights(z)
    theta = hub.directions(np.random.default_rng([cfg["split_seed"], seed, 1]), cfg["k"], p_cfg["directions"])
    h = hub.hub(z, weights)
    result["hub"] = {
        "weights": weights.tolist(),
        "sw_to_hub": [hub.sliced_w2(zm, h, theta) for zm in z],
        "sw_pairs": {f"{a}-{b}": hub.sliced_w2(z[a], z[b], theta) for a in range(len(z)) for b in range(a + 1, len(z))},
        **hub.cycle_audit(z, h, theta[0]),
    }

    wa, wb = fit_infonce(r_train[0], r_train[1], cfg["k"], seed, **cfg["infonce"])
    result["infonce"] = evaluate_maps([wa, wb], r_test[:2])
    hard = [standardise(g[tr], g[te], g) for g in (gaussianize(x[tr], x) for x in warped[:2])]
    for name, (a, b) in {"cca": raw_split[:2], "cca_hard_rank": hard}.items():
        m, whiten = spectral.block_matrix([a[0], b[0]], cfg["ridge"])
        result[name] = evaluate_maps(spectral.projections(m, whiten, cfg["k"]), [a[1], b[1]])

    # the gate: one drifted view, statistic on the learned Gaussianization or on the robust z-score
    sd = warped[0][tr].std(0)
    drifted = {str(size): warped[0] + size * sd for size in cfg["gate"]["drifts"]}
    # both gates see the same batches (the same generator state): the comparison is paired
    g_drifted = {k: [learned.apply(gaussianizers[0], v), *gauss[1:]] for k, v in drifted.items()}
    result["gate"] = gate_rates(gauss, g_drifted, np.random.default_rng([seed, 3]), cfg["gate"], te)
    c0, s0 = learned.robust_scale(warped[0][tr])
    z_drifted = {k: [(v - c0) / s0, *robust[1:]] for k, v in drifted.items()}
    result["gate_zscore"] = gate_rates(robust, z_drifted, np.random.default_rng([seed, 3]), cfg["gate"], te)
    return result


def invariance_checks(data: dict, views: list[str], cfg: dict) -> dict:
    """Hard-rank Gaussianization: invariance to the warps; standard-normal marginals on columns with at most
    5% tied values, pooled over views (NaN, a failing check, if there is none)."""
    diffs, means, variances = [], [], []
    for v in views:
        clean, warped = data[v], data[f"{v}_warped"]
        g_w = gaussianize(warped, warped, clip=cfg["clip"])
        diffs.append(np.max(np.abs(g_w - gaussianize(clean, clean, clip=cfg["clip"]))))
        nearly_untied = [j for j in range(clean.shape[1]) if np.unique(clean[:, j]).size >= 0.95 * clean.shape[0]]
        g = g_w[:, nearly_untied]
        means += np.abs(g.mean(0)).tolist()
        variances += np.abs(g.var(0) - 1).tolist()
    return {
        "max_abs_warp_difference": float(np.max(diffs)),
        "max_abs_mean": float(np.max(means)) if means else float("nan"),
        "max_abs_var_minus_1": float(np.max(variances)) if variances else float("nan"),
    }


def nutrimouse_dk(data: dict, cfg: dict) -> list[dict]:
    """Davis-Kahan on bootstrap resamples of nutrimouse (Gaussianized genes and lipids, n = 40)."""
    views = [gaussianize(data[n], data[n], clip=cfg["clip"]) for n in ("gene", "lipid")]
    m_ref, _ = spectral.block_matrix(views, cfg["nutrimouse_ridge"])
    rng = np.random.default_rng(cfg["split_seed"])
    out = []
    for _ in range(cfg["nutrimouse_bootstraps"]):
        idx = rng.integers(views[0].shape[0], size=views[0].shape[0])
        m_hat, _ = spectral.block_matrix([v[idx] for v in views], cfg["nutrimouse_ridge"])
        out.append(spectral.davis_kahan(m_ref, m_hat, cfg["nutrimouse_k"]))
    return out


def main(job) -> None:
    cfg = job.params.settings
    views = cfg["views"]
    data = load(job.input.views, views)
    progress = Progress("ssca seeds", total=len(cfg["seeds"]))
    runs = []
    for seed in cfg["seeds"]:
        runs.append(one_seed(data, views, cfg, seed))
        progress.update()
    write_json(
        job.output.runs,
        {"runs": runs, "invariance": invariance_checks(data, views, cfg), "nutrimouse": nutrimouse_dk(data, cfg)},
    )
