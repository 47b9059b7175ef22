"""Stage: scores of every member's test samples and of its untrained initialisation, the reference scores of
the real test windows, the search check and exact checks on the HP lattice, metrics.json and claims.json."""

from __future__ import annotations

import numpy as np
import yaml

from repro.papers.geocoupling.claims import CLAIMS
from repro.papers.geocoupling.coupling import curve_defects
from repro.papers.geocoupling.lattice import brute_force_energy
from repro.papers.geocoupling.scores import CLASSES, Scorer, dssp_classes
from repro.papers.geocoupling.search_check import check as search_check
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, read_npz, write_json

BRUTE_PAIRS, BRUTE_SEQUENCES = 400, 6
PER_SAMPLE = ("valid", "nearest_rmsd", "consistency")


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
    return {
        "residues": n,
        "walks": int(lat["walks"]),
        "walks_reference": c,
        "conformations": int(lat["turns"].shape[0]),
        "conformations_formula": (c - 4) // 8 + 1,
        "designable_sequences": int(stable.size),
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


def predictor_check(bench: dict[str, np.ndarray], scorer: Scorer) -> dict[str, list[float]]:
    """Per-residue log-loss (nats) of the predictor and of the training class prior on the real test windows,
    labelled with their own window DSSP."""
    labels = dssp_classes(bench["test_backbone"]).ravel()
    p = scorer.class_probabilities(bench["test_seq"]).reshape(-1, len(CLASSES))
    return {
        "predictor": (-np.log(np.maximum(p[np.arange(len(labels)), labels], 1e-300))).tolist(),
        "prior": (-scorer.log_prior[labels]).tolist(),
    }


def main(job) -> None:
    settings = job.params.settings
    bench, runs, lat = read_npz(job.input.benchmark), read_npz(job.input.runs), read_npz(job.input.lattice)
    for key in ("seq", "backbone", "untrained_seq", "untrained_backbone", "coupling", "seed", "alpha", "search_score"):
        if key not in runs:
            raise InputError(job.input.runs, f"missing array {key!r}")
    scorer = Scorer(bench, int(settings["scores"]["prefilter"]))
    couplings = list(dict.fromkeys(map(str, runs["coupling"])))
    per_coupling: dict[str, dict[str, list]] = {c: {} for c in couplings}
    samples: dict[str, dict[str, dict[str, list]]] = {c: {"trained": {}, "untrained": {}} for c in couplings}
    for m, name in enumerate(map(str, runs["coupling"])):
        for kind, prefix in (("trained", ""), ("untrained", "untrained_")):
            seq, backbone = runs[f"{prefix}seq"][m], runs[f"{prefix}backbone"][m]
            detail = scorer.per_sample(seq, backbone, "test")
            if kind == "trained":
                for key, value in scorer.summary(seq, backbone, "test", detail).items():
                    per_coupling[name].setdefault(key, []).append(value)
            for key in PER_SAMPLE:
                samples[name][kind].setdefault(key, []).extend(np.asarray(detail[key], float).tolist())
    real = scorer.summary(bench["test_seq"], bench["test_backbone"], "val")
    with open(job.input.saw_counts) as fh:
        known = {int(k): int(v) for k, v in yaml.safe_load(fh)["walks"].items()}
    metrics = {
        "couplings_checks": coupling_checks(runs),
        "seeds": [int(s) for s in runs["seeds"]],
        "couplings": couplings,
        "per_coupling": per_coupling,
        "samples": samples,
        "real_test_windows": real,
        "predictor_log_loss": predictor_check(bench, scorer),
        "learned_alpha": runs["learned_alpha"].tolist(),
        "search": {
            "log_alpha": runs["search_log_alpha"].tolist(),
            "score": runs["search_score"].tolist(),
            "round": runs["search_round"].tolist(),
        },
        "enumeration": enumeration_checks(lat, known, int(settings["data_seed"])),
        "search_check": search_check(lat, settings["search_check"], settings["search"], int(settings["data_seed"])),
        "bootstrap_resamples": int(settings["bootstrap_resamples"]),
    }
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "geocoupling", claims)
