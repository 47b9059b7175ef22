"""Pipeline schedules for conservative MLIPs: placements, the WaveK split, and a discrete-event simulator.

A task is (micro-batch m, phase p, stage s). Four-phase dependencies (see model.py): F runs stages
0 -> S-1, B1 S-1 -> 0 after the micro-batch's last F, B2a 0 -> S-1 after its B1 at stage 0, B2b S-1 -> 0 after
its last B2a; a stage's B2b also waits for its own B2a. The two-phase mode (F then B, B from S-1 to 0) is
the ordinary pipeline of a model without a double backward, used to check the simulator against the
closed-form GPipe/1F1B bubble (S-1)/(M+S-1).

The simulator is list scheduling: whenever a device is idle it starts, among its tasks whose inputs are
ready, the one its policy ranks first, subject to an admission limit (micro-batches in flight per device,
the memory bound of 1F1B). Policies:
- ``gpipe``: earlier phases first (all forwards, then backwards), no admission limit;
- ``1f1b``: later phases first, device d admits at most D - d micro-batches (PipeDream-Flush);
- ``wave``: later phases first, every device admits at most K micro-batches (a wave of K).
Placements: ``linear`` (stage s on device s) and ``folded`` (2D chunks in a V: chunk k on device k for
k < D, else 2D - 1 - k), so each device holds both a descending and an ascending chunk and the first and
last chunks (where the phases turn round and the loss is formed) share device 0.
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, field

import numpy as np

PHASES = ("F", "B1", "B2a", "B2b")
TWO_PHASES = ("F", "B")


def placement(kind: str, n_devices: int) -> list[int]:
    """Device of each stage: linear (S = D) or folded (S = 2D, V-shaped)."""
    if kind == "linear":
        return list(range(n_devices))
    if kind == "folded":
        return list(range(n_devices)) + list(range(n_devices - 1, -1, -1))
    raise ValueError(f"unknown placement {kind!r}")


def stage_costs(unit_costs: np.ndarray, split: list[int]) -> np.ndarray:
    """(stages, phases) costs of contiguous groups of units (unit_costs: (units, phases))."""
    bounds = np.cumsum([0] + list(split))
    return np.stack([unit_costs[a:b].sum(axis=0) for a, b in zip(bounds[:-1], bounds[1:])])


def uniform_split(units: int, stages: int) -> list[int]:
    """Units per stage as even as possible (the usual equal-layers partition)."""
    return [len(a) for a in np.array_split(np.arange(units), stages)]


def wavek_split(unit_costs: np.ndarray, n_devices: int, kind: str, max_exhaustive: int = 200_000) -> list[int]:
    """WaveK's balance: the contiguous split whose busiest device (sum of its stages' four-phase costs) is
    least loaded. Exhaustive over compositions when there are at most ``max_exhaustive``; beyond that (paper
    scale) the min-max contiguous partition of the stage costs by dynamic programming, which balances every
    stage and so every device's pair of chunks."""
    devices = placement(kind, n_devices)
    units, stages = len(unit_costs), len(devices)
    total = unit_costs.sum(axis=1)
    if math.comb(units - 1, stages - 1) > max_exhaustive:
        return minmax_partition(total, stages)
    best, best_split = np.inf, None
    for cuts in itertools.combinations(range(1, units), stages - 1):
        split = np.diff((0, *cuts, units)).tolist()
        per_stage = stage_costs(total[:, None], split)[:, 0]
        load = np.bincount(devices, weights=per_stage, minlength=n_devices)
        if load.max() < best - 1e-15:
            best, best_split = load.max(), split
    return best_split


def minmax_partition(costs: np.ndarray, parts: int) -> list[int]:
    """Contiguous partition of ``costs`` into ``parts`` non-empty groups minimising the largest group sum."""
    n = len(costs)
    prefix = np.concatenate([[0.0], np.cumsum(costs)])
    best = np.full((parts + 1, n + 1), np.inf)
    cut = np.zeros((parts + 1, n + 1), int)
    best[0, 0] = 0.0
    for k in range(1, parts + 1):
        for j in range(k, n - (parts - k) + 1):
            for i in range(k - 1, j):
                value = max(best[k - 1, i], prefix[j] - prefix[i])
                if value < best[k, j]:
                    best[k, j], cut[k, j] = value, i
    bounds, j = [n], n
    for k in range(parts, 0, -1):
        j = cut[k, j]
        bounds.append(j)
    return np.diff(bounds[::-1]).tolist()


@dataclass
class Result:
    makespan: float
    bubble: float
    peak_memory: np.ndarray
    tasks: list[tuple[int, str, int]] = field(default_factory=list)
    start: np.ndarray = field(default_factory=lambda: np.zeros(0))
    end: np.ndarray = field(default_factory=lambda: np.zeros(0))
    device: np.ndarray = field(default_factory=lambda: np.zeros(0, int))

    def order(self, device: int) -> list[tuple[int, str, int]]:
        """Tasks of one device in the order it ran them (what a real pipeline executes)."""
        idx = [i for i in np.argsort(self.start, kind="stable") if self.device[i] == device]
        return [self.tasks[i] for i in idx]


def dependencies(m: int, phase: str, s: int, n_stages: int) -> list[tuple[int, str, int]]:
    last = n_stages - 1
    if phase == "F":
        return [] if s == 0 else [(m, "F", s - 1)]
    if phase == "B":
        return [(m, "F", last)] if s == last else [(m, "B", s + 1), (m, "F", s)]
    if phase == "B1":
        return [(m, "F", last)] if s == last else [(m, "B1", s + 1)]
    if phase == "B2a":
        return [(m, "B1", 0)] if s == 0 else [(m, "B2a", s - 1)]
    if phase == "B2b":
        return [(m, "B2a", last)] if s == last else [(m, "B2b", s + 1), (m, "B2a", s)]
    raise ValueError(phase)


def simulate(
    costs: np.ndarray,
    devices: list[int],
    n_micro: int,
    policy: str,
    memory: np.ndarray | None = None,
    wave: int | None = None,
    two_phase: bool = False,
) -> Result:
    """Run the schedule; costs (stages, phases) in seconds, memory (stages,) bytes held per micro-batch from
    its F to its last backward on that stage. Returns makespan, bubble = 1 - busy / (D * makespan), peak
    memory per device and every task's start/end."""
    phases = TWO_PHASES if two_phase else PHASES
    n_stages, n_devices = len(devices), max(devices) + 1
    memory = np.zeros(n_stages) if memory is None else np.asarray(memory, float)
    tasks = [(m, p, s) for m in range(n_micro) for p in phases for s in range(n_stages)]
    index = {t: i for i, t in enumerate(tasks)}
    cost = np.array([costs[s, phases.index(p)] for _, p, s in tasks])
    dev = np.array([devices[s] for _, _, s in tasks])
    deps = [[index[d] for d in dependencies(m, p, s, n_stages)] for m, p, s in tasks]
    closing = phases[-1]
    first_stage = {d: min(s for s in range(n_stages) if devices[s] == d) for d in range(n_devices)}
    if policy == "1f1b":
        limit = [n_devices - d for d in range(n_devices)]
    elif policy == "wave":
        limit = [wave] * n_devices
    elif policy == "gpipe":
        limit = [n_micro] * n_devices
    else:
        raise ValueError(f"unknown policy {policy!r}")

    def rank(i: int) -> tuple:
        m, p, s = tasks[i]
        phase = phases.index(p)
        return (phase if policy == "gpipe" else -phase, m, s)

    start, end = np.full(len(tasks), np.nan), np.full(len(tasks), np.nan)
    children: list[list[int]] = [[] for _ in tasks]
    for i, ds in enumerate(deps):
        for j in ds:
            children[j].append(i)
    waiting = [len(ds) for ds in deps]
    ready: list[set[int]] = [set() for _ in range(n_devices)]
    for i, n in enumerate(waiting):
        if n == 0:
            ready[dev[i]].add(i)
    free_at = np.zeros(n_devices)
    in_flight = np.zeros(n_devices, int)
    opened = np.zeros(n_devices, int)  # micro-batches admitted so far per device (admitted in order)
    running: list[tuple[float, int]] = []
    left, now = len(tasks), 0.0
    while left:
        while running and running[0][0] <= now:
            _, i = heapq.heappop(running)
            m, p, s = tasks[i]
            if p == closing and s == first_stage[dev[i]]:
                in_flight[dev[i]] -= 1
            for c in children[i]:
                waiting[c] -= 1
                if waiting[c] == 0:
                    ready[dev[c]].add(c)
        for d in range(n_devices):
            if free_at[d] > now:
                continue
            admissible = []
            for i in ready[d]:
                m, p, s = tasks[i]
                if p == "F" and s == first_stage[d] and (m != opened[d] or in_flight[d] >= limit[d]):
                    continue
                admissible.append(i)
            if not admissible:
                continue
            i = min(admissible, key=rank)
            m, p, s = tasks[i]
            if p == "F" and s == first_stage[d]:
                opened[d] += 1
                in_flight[d] += 1
            ready[d].discard(i)
            start[i], end[i] = now, now + cost[i]
            free_at[d] = end[i]
            heapq.heappush(running, (end[i], i))
            left -= 1
        if left and not running:
            raise RuntimeError(f"schedule {policy!r} deadlocked with {left} tasks left")
        if running:
            now = running[0][0]
    makespan = float(np.nanmax(end))
    busy = float(cost.sum())
    peak = np.zeros(n_devices)
    for d in range(n_devices):
        held = [(m, s) for m in range(n_micro) for s in range(n_stages) if devices[s] == d]
        times = np.array([start[index[(m, "F", s)]] for m, s in held] + [end[index[(m, closing, s)]] for m, s in held])
        change = np.array([memory[s] for _, s in held] + [-memory[s] for _, s in held])
        order = np.lexsort((change, times))  # at equal times frees come before allocations
        peak[d] = max(float(np.max(np.cumsum(change[order]))), 0.0) if held else 0.0
    return Result(makespan, 1.0 - busy / (n_devices * makespan), peak, tasks, start, end, dev)


def closed_form_bubble(n_stages: int, n_micro: int) -> float:
    """GPipe / 1F1B bubble fraction with uniform costs: (S - 1) / (M + S - 1)."""
    return (n_stages - 1) / (n_micro + n_stages - 1)
