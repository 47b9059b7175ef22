"""Stage: exact checks of the benchmark, scores of every member's test samples, metrics.json and claims.json."""

from __future__ import annotations

import numpy as np
import yaml

from repro.papers.geocoupling.claims import claims_for
from repro.papers.geocoupling.coupling import curve_defects
from repro.papers.geocoupling.lattice import brute_force_energy
from repro.papers.geocoupling.metrics import scorer
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, read_npz, write_json

BRUTE_PAIRS, BRUTE_SEQUENCES = 400, 6


def enumeration_checks(lat: dict[str, np.ndarray], known: dict[int, int], seed: int) -> dict[str, float]:
    """Counts against A001411 and the formula; energies and ground states against brute force."""
    n = lat["turns"].shape[1] + 2
    if n - 1 not in known:
        raise InputError("resources/geocoupling/saw_counts.yaml", f"no reference count for {n - 1} steps")
    c = int(known[n - 1])
    rng = np.random.default_rng(seed)
    seqs = rng.integers(0, lat["energy"].shape[0], BRUTE_PAIRS)
    confs = rng.integers(0, lat["energy"].shape[1], BRUTE_PAIRS)
    brute = np.array([brute_force_energy(int(s), lat["turns"][k]) for s, k in zip(seqs, confs)], dtype=float)
    stable = np.flatnonzero(lat["e_min"] <= lat["designable"])
    picked = rng.choice(stable, size=min(BRUTE_SEQUENCES, stable.size), replace=False)
    ground = []
    for s in picked:
        energies = np.array([brute_force_energy(int(s), t) for t in lat["turns"]])
        ground.append([energies.min(), np.sum(energies == energies.min())])
    ground = np.array(ground, dtype=float)
    designable = lat["e_min"] <= lat["designable"]
    return {
        "residues": n,
        "walks": int(lat["walks"]),
        "walks_reference": c,
        "conformations": int(lat["turns"].shape[0]),
        "conformations_formula": (c - 4) // 8 + 1,
        "designable_sequences": int(designable.sum()),
        "median_degeneracy": float(np.median(lat["degeneracy"][designable])),
        "unique_ground_states": int(np.sum(lat["degeneracy"][designable] == 1)),
        "brute_force_energy_max_error": float(np.max(np.abs(brute - lat["energy"][seqs, confs]))),
        "brute_force_ground_state_max_error": float(
            np.max(np.abs(ground[:, 0] - lat["e_min"][picked]) + np.abs(ground[:, 1] - lat["degeneracy"][picked]))
        ),
    }


def coupling_checks(runs: dict[str, np.ndarray]) -> dict[str, float]:
    """Curves through (0, 0) and (1, 1), monotone; training time pairs within the jitter of their curve."""
    defects = [curve_defects(float(a)) for a in runs["alpha"]]
    on_curve = ~runs["random"]
    s, alpha = runs["time_s"][on_curve], runs["alpha"][on_curve][:, None]
    off = np.maximum(np.abs(runs["time_struct"][on_curve] - s), np.abs(runs["time_seq"][on_curve] - s**alpha))
    return {
        "curve_endpoint_error": float(np.max([max(d["start"], d["end"]) for d in defects])),
        "curve_largest_decrease": float(np.max([d["largest_decrease"] for d in defects])),
        "time_pairs_beyond_jitter": float(np.max(off - runs["jitter"][on_curve][:, None])),
    }


def main(job) -> None:
    bench, runs = read_npz(job.input.benchmark), read_npz(job.input.runs)
    for key in ("seq", "struct", "coupling", "seed", "alpha", "time_s", "search_score"):
        if key not in runs:
            raise InputError(job.input.runs, f"missing array {key!r}")
    benchmark = str(bench["benchmark"])
    score = scorer(bench)
    per_member = [score(runs["seq"][m], runs["struct"][m]) for m in range(len(runs["seq"]))]
    couplings = list(dict.fromkeys(map(str, runs["coupling"])))
    by_coupling = {
        c: {
            key: [per_member[m][key] for m in range(len(per_member)) if runs["coupling"][m] == c]
            for key in per_member[0]
        }
        for c in couplings
    }
    metrics = {
        "benchmark": benchmark,
        "couplings_checks": coupling_checks(runs),
        "seeds": [int(s) for s in runs["seeds"]],
        "couplings": couplings,
        "per_coupling": by_coupling,
        "learned_alpha": runs["learned_alpha"].tolist(),
        "search": {
            "log_alpha": runs["search_log_alpha"].tolist(),
            "score": runs["search_score"].tolist(),
            "round": runs["search_round"].tolist(),
        },
    }
    if benchmark == "hp_lattice":
        with open(job.input.saw_counts) as fh:
            known = {int(k): int(v) for k, v in yaml.safe_load(fh)["walks"].items()}
        metrics["enumeration"] = enumeration_checks(bench, known, int(job.params.settings["data_seed"]))
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(claims_for(benchmark), metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "geocoupling", claims)
