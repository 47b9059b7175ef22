"""Stage: per seed, fit SSCA, its ablation and the baselines on a random split of the warped views;
measure retrieval, subspace stability, Davis-Kahan diagnostics, hub coupling, cycle audit and the gate.
"""

from __future__ import annotations

import numpy as np

from repro.papers.ssca import gate, hub, spectral
from repro.papers.ssca.baselines import fit_infonce
from repro.papers.ssca.gaussianize import gaussianize, tracked
from repro.papers.ssca.metrics import recall_at_k
from repro.workflow.io import InputError, write_json
from repro.workflow.progress import Progress


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


def spectral_fit(train: list[np.ndarray], test: list[np.ndarray], full: list[np.ndarray], cfg: dict) -> dict:
    """Block-spectral SSCA core: projections, component dependence weights, retrieval, stability, DK."""
    k = cfg["k"]
    m_train, whiten = spectral.block_matrix(train, cfg["ridge"])
    m_full, _ = spectral.block_matrix(full, cfg["ridge"])
    maps = spectral.projections(m_train, whiten, k)
    z_train = [x @ w for x, w in zip(train, maps)]
    z_test = [x @ w for x, w in zip(test, maps)]
    weights = hub.dependence_weights(z_train)
    component = np.mean(
        [[abs(np.corrcoef(a[:, j], b[:, j])[0, 1]) for j in range(k)] for a, b in zip(z_train, z_train[1:])], axis=0
    )
    scaled = [z * component for z in z_test]
    dk = spectral.davis_kahan(m_full, m_train, k)
    return {"z_test": scaled, "weights": weights, "retrieval": both_ways(scaled[0], scaled[1]), "dk": dk}


def gate_rates(g_clean: list[np.ndarray], g_drift: list[np.ndarray], rng, cfg: dict, held: np.ndarray) -> dict:
    """False alarms on clean held-out batches and misses on drifted ones, per alpha. Calibration and test
    batches are independent draws from the same held-out rows, so their scores are exchangeable."""
    b = cfg["batch"]

    def scores(views, pool, n):
        return np.array([gate.statistic([v[rng.choice(pool, b, replace=False)] for v in views]) for _ in range(n)])

    cal = scores(g_clean, held, cfg["n_calibration"])
    clean, drifted = scores(g_clean, held, cfg["n_test"]), scores(g_drift, held, cfg["n_test"])
    out = {}
    for alpha in cfg["alphas"]:
        t = gate.conformal_threshold(cal, alpha)
        out[str(alpha)] = {"false_alarms": int(np.sum(clean > t)), "misses": int(np.sum(drifted <= t)), "n": clean.size}
    return out


def one_seed(data: dict, views: list[str], cfg: dict, seed: int) -> dict:
    rng = np.random.default_rng([cfg["split_seed"], seed])
    n = data["label"].size
    order = rng.permutation(n)
    n_train = int(cfg["train_share"] * n)
    tr, te = order[:n_train], order[n_train:]
    warped = [data[f"{v}_warped"] for v in views]
    ref_idx = rng.choice(tr, cfg["reference_size"], replace=False)
    soft, errors = [], []
    for x in warped:
        g, err = tracked(x[ref_idx], x, cfg["soft_eps"], cfg["clip"])
        soft.append(g)
        errors.append(err)
    gauss_split = [standardise(g[tr], g[te], g) for g in soft]
    raw_split = [standardise(x[tr], x[te], x) for x in warped]
    result = {"seed": seed, "gaussianization_error": errors}
    for name, split in (("ssca", gauss_split), ("no_gaussianization", raw_split)):
        fit = spectral_fit(*(list(s) for s in zip(*split)), cfg)
        result[name] = {"retrieval": fit["retrieval"], "davis_kahan": fit["dk"], "weights": fit["weights"].tolist()}
        if name == "ssca":
            z = fit["z_test"]
            theta = hub.directions(np.random.default_rng([cfg["split_seed"], seed, 1]), cfg["k"], cfg["sw_directions"])
            h = hub.hub(z, fit["weights"])
            result["hub"] = {
                "sw_to_hub": [hub.sliced_w2(zm, h, theta) for zm in z],
                "sw_pairs": {
                    f"{a}-{b}": hub.sliced_w2(z[a], z[b], theta) for a in range(len(z)) for b in range(len(z)) if a < b
                },
                **hub.cycle_audit(z, h, theta[0]),
            }
    (a_tr, a_te, _), (b_tr, b_te, _) = raw_split[0], raw_split[1]
    wa, wb = fit_infonce(a_tr, b_tr, cfg["k"], seed, **cfg["infonce"])
    result["infonce"] = {"retrieval": both_ways(a_te @ wa, b_te @ wb)}
    hard = [standardise(g[tr], g[te], g) for g in (gaussianize(x[tr], x) for x in warped[:2])]
    for name, (a, b) in {"cca": raw_split[:2], "cca_hard_rank": hard}.items():
        m, whiten = spectral.block_matrix([a[0], b[0]], cfg["ridge"])
        wa, wb = spectral.projections(m, whiten, cfg["k"])
        result[name] = {"retrieval": both_ways(a[1] @ wa, b[1] @ wb)}
    result["gate"] = {}
    for size in cfg["gate"]["drifts"]:
        shifted = warped[0] + size * warped[0][tr].std(0)
        g_drift = [gaussianize(warped[0][ref_idx], shifted, cfg["soft_eps"], cfg["clip"]), *soft[1:]]
        result["gate"][str(size)] = gate_rates(soft, g_drift, rng, cfg["gate"], te)
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
