"""Stage: generate the seeded test problems in the canonical format under results/talda/data/.

- quadratic.npz: quadratic games, one instance per (dimension, coupling, seed), matrices A, B, C, a, c
  stacked per dimension (keys like ``A_d10``), their coupling, seed, known saddle and start points;
- robust_ls.npz: robust least-squares games of the same layout (coupling set by the data matrix);
- yang.npz: start points of the Yang et al. scalar example and its grid-estimated constants;
- manifest.json: seeds, settings and sha256 of each file.
"""

from __future__ import annotations

import numpy as np

from repro.papers.talda.problems import QuadraticGames, estimate_yang_constants, quadratic_game, robust_least_squares
from repro.workflow.io import atomic_path, sha256, write_json


def stack(instances: list[dict], suffix: str) -> dict[str, np.ndarray]:
    """Stack instances of one size; add the saddle (linear solve) and standard-normal start points."""
    arrays = {k: np.stack([inst[k] for inst in instances]) for k in ("A", "B", "C", "a", "c")}
    xs, ys = QuadraticGames(**arrays).saddle()
    out = {f"{k}_{suffix}": v for k, v in arrays.items()}
    out[f"x_star_{suffix}"], out[f"y_star_{suffix}"] = xs, ys
    return out


def quadratic_family(settings: dict, seed: int) -> dict[str, np.ndarray]:
    out = {}
    for d in settings["dims"]:
        instances, couplings, seeds = [], [], []
        for s in settings["seeds"]:
            for coupling in settings["couplings"]:
                rng = np.random.default_rng([seed, d, s, int(round(coupling * 1e6))])
                instances.append(quadratic_game(rng, d, coupling, settings["mu"], settings["l_block"]))
                couplings.append(coupling)
                seeds.append(s)
        out |= stack(instances, f"d{d}")
        start = np.random.default_rng([seed, d, 999]).normal(size=(len(instances), 2 * d))
        out[f"x0_d{d}"], out[f"y0_d{d}"] = start[:, :d], start[:, d:]
        out[f"coupling_d{d}"], out[f"seed_d{d}"] = np.array(couplings), np.array(seeds)
    return out


def robust_ls_family(settings: dict, seed: int) -> dict[str, np.ndarray]:
    cfg = settings["robust_ls"]
    out = {}
    for d in settings["dims"]:
        rows = cfg["rows_per_dim"] * d
        instances = [
            robust_least_squares(np.random.default_rng([seed, d, s, 7]), d, rows, cfg["lam"]) for s in settings["seeds"]
        ]
        out |= stack(instances, f"d{d}")
        rng = np.random.default_rng([seed, d, 998])
        out[f"x0_d{d}"], out[f"y0_d{d}"] = rng.normal(size=(len(instances), d)), rng.normal(size=(len(instances), rows))
        out[f"seed_d{d}"] = np.array(settings["seeds"])
    return out


def main(job) -> None:
    settings = job.params.settings
    seed = int(settings["data_seed"])
    yang_cfg = settings["yang"]
    constants = estimate_yang_constants(yang_cfg["extent"], yang_cfg["grid_points"])
    start = np.random.default_rng([seed, 1]).uniform(
        -yang_cfg["start_radius"], yang_cfg["start_radius"], size=(len(settings["seeds"]), 2)
    )
    files = {
        "quadratic": quadratic_family(settings, seed),
        "robust_ls": robust_ls_family(settings, seed),
        "yang": {"x0": start[:, :1], "y0": start[:, 1:], **{k: np.float64(v) for k, v in constants.items()}},
    }
    for name, arrays in files.items():
        with atomic_path(job.output[name]) as tmp:
            np.savez(tmp, **arrays)
    write_json(
        job.output.manifest,
        {
            "source": "embedded",
            "generator": "repro.papers.talda.data",
            "seed": seed,
            "settings": settings,
            "files": {f"{name}.npz": {"sha256": sha256(job.output[name])} for name in files},
        },
    )
