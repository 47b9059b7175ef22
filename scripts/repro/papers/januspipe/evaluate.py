"""Stage: the schedule simulations on measured costs, the simulator's closed-form check, metrics and claims.

Simulated at ``simulate.devices`` devices and ``simulate.micro_batches`` micro-batches (S = 4, M = 8 in the
default), each on the stage costs measured for its own split:
- ``gpipe`` and ``1f1b``: linear placement, equal units per stage;
- ``hanayo``: folded (wave) placement, equal units per chunk, 1F1B's admission (device d: D - d in flight);
- ``janus``: SymFold's folded placement, WaveK's balanced split, waves of K micro-batches;
- ablations ``symfold_only`` (folded, equal units, waves of K) and ``wavek_only`` (linear, WaveK split, 1F1B).
"""

from __future__ import annotations

import numpy as np

from repro.papers.januspipe.claims import CLAIMS
from repro.papers.januspipe.schedule import closed_form_bubble, placement, simulate
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, read_json, write_json

SCHEDULES = {
    "gpipe": ("linear_uniform", "linear", "gpipe"),
    "1f1b": ("linear_uniform", "linear", "1f1b"),
    "hanayo": ("folded_uniform", "folded", "1f1b"),
    "janus": ("folded_wavek", "folded", "wave"),
    "symfold_only": ("folded_uniform", "folded", "wave"),
    "wavek_only": ("linear_wavek", "linear", "1f1b"),
}


def closed_form_check(grid: list[list[int]]) -> float:
    """Largest |simulated - (S-1)/(M+S-1)| bubble over (S, M) with uniform two-phase costs, GPipe and 1F1B."""
    errors = []
    for s, m in grid:
        for policy in ("gpipe", "1f1b"):
            result = simulate(np.ones((s, 2)), placement("linear", s), m, policy, two_phase=True)
            errors.append(abs(result.bubble - closed_form_bubble(s, m)))
    return float(np.max(errors))


def simulations(costs: dict, cfg: dict) -> dict:
    out = {}
    for name, (plan_key, kind, policy) in SCHEDULES.items():
        plan = costs["plans"][plan_key]
        r = simulate(np.asarray(plan["costs"]), placement(kind, cfg["devices"]), cfg["micro_batches"], policy,
                     memory=np.asarray(plan["memory_bytes"]), wave=cfg["wave"])  # fmt: skip
        out[name] = {
            "split": plan["split"],
            "makespan_s": r.makespan,
            "bubble": r.bubble,
            "peak_memory_bytes": r.peak_memory.tolist(),
            "timeline": [
                [int(r.device[i]), t[0], t[1], t[2], float(r.start[i]), float(r.end[i])] for i, t in enumerate(r.tasks)
            ],  # fmt: skip
        }
    return out


def bootstrap(costs: dict, cfg: dict, seed: int = 0) -> dict:
    """Makespan and peak memory of every schedule, and the whole model's phase seconds, on ``cfg['bootstrap']``
    resamples of the timing repeats (the same repeats for every plan, which were measured round by round): the
    spread the timing claims' intervals come from. Splits and placements stay those of the point estimate."""
    rng = np.random.default_rng(seed)
    per_repeat = {k: np.asarray(v["costs_per_repeat"]) for k, v in costs["plans"].items()}
    n_repeats = next(iter(per_repeat.values())).shape[0]
    out: dict = {"makespan_s": {k: [] for k in SCHEDULES}, "peak_memory_bytes": {k: [] for k in SCHEDULES}}
    out["phase_seconds"] = []
    for _ in range(cfg["bootstrap"]):
        pick = rng.integers(0, n_repeats, n_repeats)
        medians = {k: np.median(v[pick], axis=0) for k, v in per_repeat.items()}
        out["phase_seconds"].append(medians["linear_uniform"].sum(axis=0).tolist())
        for name, (plan_key, kind, policy) in SCHEDULES.items():
            r = simulate(medians[plan_key], placement(kind, cfg["devices"]), cfg["micro_batches"], policy,
                         memory=np.asarray(costs["plans"][plan_key]["memory_bytes"]), wave=cfg["wave"])  # fmt: skip
            out["makespan_s"][name].append(r.makespan)
            out["peak_memory_bytes"][name].append(float(np.max(r.peak_memory)))
    return out


def main(job) -> None:
    settings = job.params.settings
    costs, pipeline, trained = read_json(job.input.costs), read_json(job.input.pipeline), read_json(job.input.train)
    if "plans" not in costs or "unit_costs" not in costs:
        raise InputError(job.input.costs, "needs 'unit_costs' and 'plans'")
    unit = np.asarray(costs["unit_costs"])
    # the whole model's phase times, from the 1F1B split (measured interleaved with the other plans)
    whole = np.asarray(costs["plans"]["linear_uniform"]["costs"]).sum(axis=0)
    sims = simulations(costs, settings["simulate"])
    plans = pipeline["plans"]
    metrics = {
        "closed_form_max_error": closed_form_check(settings["check_grid"]),
        "phase_seconds": dict(zip(("F", "B1", "B2a", "B2b"), whole.tolist())),
        "backward_to_forward_ratio": float(whole[1:].sum() / whole[0]),
        "unit_phase_seconds": dict(zip(("F", "B1", "B2a", "B2b"), unit.sum(axis=0).tolist())),
        "simulated": sims,
        "makespan_s": {k: v["makespan_s"] for k, v in sims.items()},
        "peak_memory_bytes": {k: float(np.max(v["peak_memory_bytes"])) for k, v in sims.items()},
        "pipeline": {k: {m: v[m] for m in v if m != "order"} for k, v in plans.items()},
        "decomposition_max_rel_error": float(
            np.max(
                [
                    max(v["force_max_abs_error"], v["grad_max_rel_error"], v["final_weight_max_rel_error"])
                    for v in plans.values()
                ]
            )
        ),  # fmt: skip
        "measured_step_seconds": {k: v["step_seconds"] for k, v in plans.items()},
        "mlip_test": trained["test"],
        "bootstrap": bootstrap(costs, settings["simulate"]),
    }
    reported = load_reported(job.input.reported)
    metrics["reported"] = {k: v["value"] for k, v in reported.items()}
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, reported)
    write_claims(job.output.claims, "januspipe", claims)
