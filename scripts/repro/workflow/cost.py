"""A stage's cost at paper scale, extrapolated from rehearsal runs (``benchmarks/full_scale_cost.py``).

One mechanism for every paper, with no per-paper model. The rehearsal (config/rehearsal.yaml) sets each size
key ``k`` of a paper (``x-size: true`` in the schema) to a small value ``r_k``; config/full.yaml sets it to
``f_k``. The benchmark runs the paper's rehearsal at points ``t`` of the geometric path

    size_k(t) = r_k * (f_k / r_k) ** t          (t = 0: the rehearsal, t = 1: full scale)

every size key moving at once, each by its own ratio, and reads every job's CPU seconds and peak resident MB.

**The model, and why.** A stage's cost is taken to be a constant plus a power law of its sizes,
``y = c + A * prod_k size_k ** b_k`` (c: the interpreter, imports and config that every job pays; the power
law: loops over samples, epochs, steps, widths squared, pixels, ... each key with its own exponent, which the
fit never needs to know). On the path, ``prod_k size_k(t) ** b_k = prod_k r_k ** b_k * exp(t * beta)`` with
``beta = sum_k b_k log(f_k / r_k)``, so

    y(t) = c + a * exp(beta * t)

exactly: three numbers (c >= 0, a >= 0, beta >= 0), whatever the number of size keys, and y(1) is the
prediction at full scale. ``c`` is measured, not fitted: every stage's log records what its process had used
when its work began (repro.workflow.entry: interpreter, imports, config), so the three or more measured
points fit only ``a`` and ``beta`` (a free constant trades against the growth: at rehearsal sizes, noise of
a few per cent on three points then moves the extrapolation by orders of magnitude more). Measuring along the one direction that leads
to full scale is what lets a single exponent stand for all keys; scaling keys by one common factor would not
(a stage's cost then depends on how the unknown exponents split between keys with very different ratios).
The fit is least squares on a grid of beta (c and a linear, constrained non-negative: no unit of work saves
time or memory). Integer keys are rounded on the path; each run's ``t`` is then recomputed from its
realised sizes (``projected_t``).

What it cannot see, said in each row: a cost below the measurement noise at rehearsal sizes is extrapolated
as the noise; a size that is no config key (files in a user's folder, whose count the fixture fixes) stays at
the fixture's; a number list whose length differs walks every element by the ratio of the largest ones, and its length
ratio multiplies the CPU seconds per job (layers, a sweep a job loops over; conservative where a sweep is
one job per point); seeds lists are ids, their length ratio the number of jobs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

# ---------------------------------------------------------------- the size keys and the path


@dataclass(frozen=True)
class SizeKey:
    """One size key the rehearsal sets: its path from the config root, its rehearsal and full values."""

    path: tuple[str | int, ...]
    rehearsal: Any
    full: Any

    @property
    def dotted(self) -> str:
        return ".".join(map(str, self.path))

    @property
    def is_ids(self) -> bool:
        """Seeds (ids, one job each): their count is a number of jobs, their values no size."""
        return str(self.path[-1]).endswith("seeds")

    @property
    def walks(self) -> bool:
        """Whether the key moves along the path: numbers (or number lists) that differ, not ids."""
        r, f = _numbers(self.rehearsal), _numbers(self.full)
        return not self.is_ids and r is not None and f is not None and r != f and all(a > 0 for a in r + f)

    def ratios(self) -> list[float]:
        """Full over rehearsal per element; a list whose length differs: every element by the ratio of the
        largest elements (its length ratio is ``length_ratio``)."""
        r, f = _numbers(self.rehearsal), _numbers(self.full)
        if len(r) == len(f):
            return [b / a for a, b in zip(r, f)]
        return [max(f) / max(r)] * len(r)

    def log_ratio(self) -> list[float]:
        return [math.log(x) for x in self.ratios()]

    def length_ratio(self) -> float:
        """A number list whose length differs at full scale (depths, sweeps, seeds): full over rehearsal."""
        if isinstance(self.rehearsal, list) and isinstance(self.full, list) and self.rehearsal:
            return len(self.full) / len(self.rehearsal)
        return 1.0


def _numbers(value: Any) -> list[float] | None:
    values = value if isinstance(value, list) else [value]
    if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return [float(v) for v in values]
    return None


def size_keys(
    rehearsal_overlay: Mapping[str, Any], full: Mapping[str, Any], slug: str, sources: Sequence[str] = ()
) -> list[SizeKey]:
    """The size keys rehearsal.yaml sets for ``slug`` (its ``papers.<slug>`` block, and the ``data.<source>``
    blocks of the shared sources it reads), with their full values."""
    from repro.workflow.schema_keys import SIZE, annotations, leaves

    found = list(leaves((rehearsal_overlay.get("papers") or {}).get(slug) or {}, ("papers", slug)))
    for source in sources:
        found += leaves((rehearsal_overlay.get("data") or {}).get(source) or {}, ("data", source))
    out = []
    for path, value in found:
        if not annotations(path).get(SIZE):
            continue
        node: Any = full
        for part in path:
            node = node[part] if isinstance(node, Mapping) and part in node else None
        out.append(SizeKey(path, value, node))
    return out


def value_at(key: SizeKey, t: float) -> Any:
    """The key's value at ``t`` on the path (integers rounded, never below the rehearsal's value)."""
    if not key.walks:
        return key.rehearsal

    integer = all(isinstance(v, int) for v in (key.full if isinstance(key.full, list) else [key.full]))

    def one(a: Any, ratio: float) -> Any:
        v = float(a) * ratio**t
        if integer and isinstance(a, int):
            end = int(round(a * ratio))
            if end < a and t < 1:
                # a key that shrinks toward full scale (a downsampling factor, a stride) moves through the
                # divisors of its rehearsal value, so that it still divides whatever that value divides (a
                # grid of 384 downsampled by 12 may be by 6 or 4, never by 9)
                divisors = [d for d in range(max(end, 1), a + 1) if a % d == 0]
                return min(divisors, key=lambda d: abs(math.log(d / v)))
            # a multiple of what both ends share (a crop that must divide by 16 stays so), never below the
            # smaller end
            unit = math.gcd(a, end) or 1
            return max(unit * int(round(v / unit)), min(a, end))
        return v

    if isinstance(key.rehearsal, list):
        return [one(a, q) for a, q in zip(key.rehearsal, key.ratios())]
    return one(key.rehearsal, key.ratios()[0])


def overlay_at(keys: Sequence[SizeKey], t: float) -> dict[str, Any]:
    """The config overlay (nested mapping from the root) that puts every walking key at ``t``."""
    overlay: dict[str, Any] = {}
    for key in keys:
        if not key.walks:
            continue
        node = overlay
        for part in key.path[:-1]:
            node = node.setdefault(part, {})
        node[key.path[-1]] = value_at(key, t)
    return overlay


def projected_t(keys: Sequence[SizeKey], values: Mapping[str, Any]) -> float:
    """The ``t`` of a run whose walking keys have ``values`` (dotted -> value): its log-size increments over
    the rehearsal summed over the keys, over the same sum at full scale. It is the path's ``t`` when nothing
    was rounded, and exact for rounded points when the keys' exponents are equal (a rounded small integer,
    epochs 2 -> 4, then counts as what it is: a doubling)."""
    num = den = 0.0
    for key in keys:
        if not key.walks:
            continue
        realised = _numbers(values.get(key.dotted, key.rehearsal))
        for a, x, u in zip(_numbers(key.rehearsal), realised, key.log_ratio()):
            num += math.log(x / a)
            den += u
    return num / den if den else 0.0


def job_multiplier(keys: Sequence[SizeKey]) -> float:
    """Jobs at full scale per rehearsal job: the seeds lists' length ratios."""
    return float(np.prod([k.length_ratio() for k in keys if k.is_ids]))


def length_multiplier(keys: Sequence[SizeKey]) -> float:
    """Work per job at full scale beyond the path: the length ratios of the other number lists (layers of a
    network, points of a sweep a job loops over; a sweep that is one job per point over-counts)."""
    return float(np.prod([k.length_ratio() for k in keys if not k.is_ids and _numbers(k.rehearsal) is not None]))


def step_for(keys: Sequence[SizeKey], growth: float) -> float:
    """The ``t`` at which the fastest-moving key has grown by ``growth`` (1 when no key walks)."""
    largest = max((max(k.log_ratio()) for k in keys if k.walks), default=0.0)
    return min(1.0, math.log(growth) / largest) if largest > 0 else 1.0


# ---------------------------------------------------------------- the fit


@dataclass(frozen=True)
class PathFit:
    """y(t) = c + a * exp(beta * t), fitted to (t, y) points."""

    c: float
    a: float
    beta: float
    points: int
    rms: float

    def predict(self, t: float = 1.0) -> float:
        return self.c + self.a * math.exp(self.beta * t)

    def describe(self) -> str:
        return f"{self.c:.3g} + {self.a:.3g} exp({self.beta:.3g} t)"


BETAS = np.concatenate([[0.0], np.geomspace(1e-3, 60.0, 300)])


def _residuals(t: np.ndarray, y: np.ndarray, betas: np.ndarray, c: float | None) -> np.ndarray:
    """(len(betas), 3): for each beta the least-squares residual norm, c and a of ``c + a exp(beta t)`` with
    c, a >= 0 (NNLS, in closed form: one or two columns), c held where given. Vectorised over the betas: the
    benchmark's noise ranges fit every sign pattern of every stage's points."""
    grows = np.exp(np.outer(betas, t))  # (B, n)
    if c is not None:
        r = y - c
        a = np.maximum((grows @ r) / np.einsum("bn,bn->b", grows, grows), 0.0)
        residual = np.linalg.norm(r[None, :] - a[:, None] * grows, axis=1)
        return np.column_stack([residual, np.full_like(a, c), a])
    n = float(len(t))
    sg, sgg, sgy, sy = grows.sum(1), np.einsum("bn,bn->b", grows, grows), grows @ y, y.sum()
    det = n * sgg - sg**2
    with np.errstate(divide="ignore", invalid="ignore"):
        c_free, a_free = (sgg * sy - sg * sgy) / det, (n * sgy - sg * sy) / det
    candidates = []
    # both columns where the unconstrained solution is feasible; else the better of one column alone
    free_ok = (det > 1e-12 * n * sgg) & (c_free >= 0) & (a_free >= 0)
    c_free, a_free = np.where(free_ok, c_free, 0.0), np.where(free_ok, a_free, 0.0)
    candidates.append((np.where(free_ok, 0.0, np.inf), c_free, a_free))
    a_only = np.maximum(sgy / sgg, 0.0)
    candidates.append((0.0, np.zeros_like(a_only), a_only))
    c_only = np.full_like(a_only, max(sy / n, 0.0))
    candidates.append((0.0, c_only, np.zeros_like(a_only)))
    best = None
    for penalty, cc, aa in candidates:
        residual = np.linalg.norm(y[None, :] - cc[:, None] - aa[:, None] * grows, axis=1) + penalty
        if best is None:
            best = np.column_stack([residual, cc, aa])
        else:
            better = residual < best[:, 0]
            best[better] = np.column_stack([residual, cc, aa])[better]
    return best


def fit_path(
    ts: Sequence[float], ys: Sequence[float], max_beta: float | None = None, c: float | None = None
) -> PathFit:
    """Least squares of ``c + a exp(beta t)`` on the points (c, a >= 0 at each beta of a grid, the beta of
    least residual kept; ties go to the smallest beta, the slowest growth that explains the data).
    A measured ``c`` (the stage's start-up: what its process had used when the work began) is held fixed,
    so that the points fit only the growing part, ``a`` and ``beta``: three points then over-determine two
    numbers instead of just determining three. Fewer than two distinct ``t``: a constant (the mean)."""
    t = np.asarray(ts, dtype=float)
    y = np.asarray(ys, dtype=float)
    if len(np.unique(t)) < 2:
        return PathFit(float(np.mean(y)), 0.0, 0.0, len(y), float(np.std(y)))

    grid = BETAS if max_beta is None else BETAS[BETAS <= max_beta]
    table = _residuals(t, y, grid, c)
    best_i = 0
    for i in range(1, len(grid)):
        if table[i, 0] < table[best_i, 0] * (1 - 1e-9) - 1e-12:
            best_i = i
    best = (float(table[best_i, 0]), float(table[best_i, 1]), float(table[best_i, 2]), float(grid[best_i]))
    # refine beta between the grid's neighbours of the best
    from scipy.optimize import minimize_scalar

    lo, hi = grid[max(best_i - 1, 0)], grid[min(best_i + 1, len(grid) - 1)]
    if hi > lo:
        found = minimize_scalar(
            lambda b: float(_residuals(t, y, np.array([b]), c)[0, 0]),
            bounds=(lo, hi),
            method="bounded",
            options={"xatol": 1e-9},
        )
        if found.fun < best[0]:
            residual, c_fit, a = _residuals(t, y, np.array([float(found.x)]), c)[0]
            best = (float(residual), float(c_fit), float(a), float(found.x))
    residual, c_fit, a, beta = best
    return PathFit(c_fit, a, beta, len(y), residual / math.sqrt(len(y)))


def flat(ys: Sequence[float], share: float) -> bool:
    """Whether a series grew less than ``share`` of its first point from its first to its largest: growth
    the noise of a measurement can make, not a trend to extrapolate."""
    return len(ys) < 2 or max(ys) - ys[0] < share * ys[0]


def fit_or_flat(ts: Sequence[float], ys: Sequence[float], share: float, c: float | None = None) -> tuple[PathFit, bool]:
    """The path fit, or for a flat series (``flat``) the constant at its largest point: a stage whose cost
    the rehearsal's sizes do not move (within noise) is predicted at what was measured."""
    if flat(ys, share):
        return PathFit(float(max(ys)), 0.0, 0.0, len(ys), 0.0), True
    return fit_path(ts, ys, c=c), False


def fit_range(
    ts: Sequence[float], ys: Sequence[float], rel: float, absolute: float = 0.0, c: float | None = None
) -> tuple[float, float]:
    """(lowest, highest) prediction at t = 1 when each point y is moved by -(rel y + absolute) or
    +(rel y + absolute) (every combination):
    how far noise of that size on the measured points can move the extrapolation. The curvature of three
    points decides beta, so a few per cent of noise on points whose growth is small moves it a lot."""
    import itertools

    preds = [
        fit_path(ts, [y + s * (rel * y + absolute) for y, s in zip(ys, signs)], c=c).predict(1.0)
        for signs in itertools.product((-1.0, 1.0), repeat=len(ys))
    ]
    return float(min(preds)), float(max(preds))


# ---------------------------------------------------------------- requests and partitions


def stage_request(section: Mapping[str, Any], stage: str) -> dict[str, int]:
    """threads, mem_mb, runtime (minutes) and gpu the stage asks for at its first attempt (its config's
    ``resources`` over the workflow's defaults, as repro.workflow.stages.stage_resources reads them)."""
    from repro.workflow.stages import DEFAULT_RESOURCES

    return dict(DEFAULT_RESOURCES | dict((section.get("resources") or {}).get(stage, {})))


def read_partitions(path: str | Path) -> tuple[dict[str, dict], dict[str, dict]]:
    """(partitions, devices) of slurm/partitions.yaml: each partition's limits, each GPU partition's device."""
    data = yaml.safe_load(Path(path).read_text())
    return {k: dict(v or {}) for k, v in data["partitions"].items()}, dict(data.get("devices") or {})


def limit_problems(request: Mapping[str, int], limits: Mapping[str, Any]) -> list[str]:
    """Where a request exceeds a partition's limits (max_runtime minutes, max_mem_mb, max_threads, max_gpu)."""
    out = []
    for key, limit in (("runtime", "max_runtime"), ("mem_mb", "max_mem_mb"), ("threads", "max_threads")):
        if limit in limits and float(request.get(key, 0)) > float(limits[limit]):
            out.append(f"requests {key} {request.get(key)} > partition {limit} {limits[limit]}")
    if int(request.get("gpu", 0)) > int(limits.get("max_gpu", 0)):
        out.append(f"requests gpu {request.get('gpu')} > partition max_gpu {limits.get('max_gpu', 0)}")
    return out


def partition_for(request: Mapping[str, int], partitions: Mapping[str, dict]) -> str | None:
    """The partition the executor sends the job to: one of its kind (GPUs or not) that admits it, else the
    first of its kind."""
    wants_gpu = int(request.get("gpu", 0)) > 0
    kind = [n for n, p in partitions.items() if (int(p.get("max_gpu", 0)) > 0) == wants_gpu]
    fitting = [n for n in kind if not limit_problems(request, partitions[n])]
    return (fitting or kind or [None])[0]


def device_rate(device: Mapping[str, Any], precision: str = "fp32") -> float:
    """FLOP/s planned on a device: its data-sheet peak at ``precision`` (``fp32_tflops``, ``bf16_tflops``)
    times the site's planning utilisation."""
    return float(device[f"{precision}_tflops"]) * 1e12 * float(device["planning_utilisation"])


def request_problems(row: Mapping[str, Any], partitions: Mapping[str, dict], devices: Mapping[str, dict]) -> list[str]:
    """Every way a cost row's predicted need exceeds its request, or its request its partition's limits."""
    request = {"threads": row["threads"], "mem_mb": row["mem_mb"], "runtime": row["runtime_min"], "gpu": row["gpu"]}
    partition = partition_for(request, partitions)
    if partition is None:
        return ["no partition of its kind in slurm/partitions.yaml"]
    problems = limit_problems(request, partitions[partition])
    if row["peak_mb"] > row["mem_mb"]:
        problems.append(f"predicted peak {row['peak_mb']:,} MB > mem_mb {row['mem_mb']:,}")
    if row["wall_min_per_job"] > row["runtime_min"]:
        problems.append(f"predicted {row['wall_min_per_job']:,.0f} min > runtime {row['runtime_min']:,}")
    if row["gpu"]:
        device = devices.get(partition)
        if not device:
            problems.append(f"partition {partition} declares no device (devices: in slurm/partitions.yaml)")
        elif row["device_mb"] > float(device["gpu_mem_mb"]):
            problems.append(f"device memory {row['device_mb']:,} MB > {partition}'s {device['gpu_mem_mb']:,} MB")
    return problems
