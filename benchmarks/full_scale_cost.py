"""Each stage's cost at paper scale, extrapolated from rehearsal runs at several sizes, against its request.

    python benchmarks/full_scale_cost.py ccdb loda        # measure these papers (one at a time), then predict
    python benchmarks/full_scale_cost.py --extend 240 ccdb  # and add larger points while a stage is undetermined
    python benchmarks/full_scale_cost.py --refit          # predict again from the recorded measurements
    python benchmarks/full_scale_cost.py --table          # print the recorded table
    python benchmarks/full_scale_cost.py --count-steps    # recount the probes' steps (work model), then refit

For each paper, in a scratch copy of the checkout, runs
``snakemake --cores 1 --configfile config/full.yaml config/rehearsal.yaml <path overlay> <paper>`` at three
points of the geometric path from the rehearsal's sizes to full.yaml's (``repro.workflow.cost``: every size
key the rehearsal sets moves at once, each by its own ratio; t = 0 is the rehearsal, the others grow the
fastest key by 2 and 4), and reads each job's CPU seconds and peak resident MB from its log's ``done in``
line (getrusage of the stage's process; Snakemake's benchmark .tsv samples the process tree every few
seconds, which misses most of a short job). Per stage it fits ``y(t) = c + a exp(beta t)`` to CPU seconds
and to peak MB (the power law in the sizes, seen along the path: the model and why are in
``repro.workflow.cost``), predicts t = 1 and compares it with the stage's ``resources`` in config/full.yaml
and its partition's limits (``slurm/partitions.yaml``).

CPU stage: wall per job = predicted CPU-s / threads (a perfect speed-up, optimistic for threads > 1).
GPU stage (``gpu`` in its resources) whose paper has a ``gpu_probe`` for it (``STAGE`` and ``work``): the
work model. The probe's training step at full.yaml's model sizes is counted once on the meta device
at the stage's batch (``repro.learning.step_cost``: FLOPs per sample, the peak of live tensors over forward
and backward, parameters; recorded under the paper's ``train_step`` so that ``--refit`` needs no torch work;
``--count-steps`` recounts it alone), and the probe's ``work(section)`` gives the samples one job passes
through that step and the batch. A job that trains several networks, tasks or losses one after the other
(flower, gpo, syngr, imgcot, cod-lite) has a probe with ``arms(section)``: each arm's step is counted the same
way, on the device the probe's was, and its FLOPs per sample over the probe's (its share) weighs its samples
in ``work(section, shares)``. FLOPs per job = FLOPs per sample x samples; time = FLOPs at the device's
planned rate at the stage's ``train.precision`` (``devices`` in slurm/partitions.yaml) plus the host's
measured start-up; device memory = 12 bytes per parameter (weights, AdamW's moments) + the step's live peak
(of the job's largest arm) + 1 GiB of CUDA context. The rehearsal's CPU seconds
do not enter (at its sizes they are mostly Python). Such a row is resolved when its host peak is.
Other GPU stages (evaluation, no probe): FLOPs = the growing part of the CPU seconds (``a exp(beta)``, the
fit's ``c`` is the host's fixed cost) times this machine's measured single-thread fp32 matmul rate (an upper
bound on the FLOPs a CPU second did: Python dispatch and memory-bound kernels do fewer), time = FLOPs at the
device's planned rate plus the host's fixed cost; device memory = the growing part of the peak (the tensors
a CPU run holds in its resident set) plus 1 GiB of CUDA context.

Each row also gives the range of predictions when every measured point moves by 5 % + 0.5 s (CPU-s) or 5 % + 30 MB
(peak MB) either way; a row whose range spans more than ``RESOLVED_SPAN`` is ``unresolved``: the points do not
determine how it grows. Such a row is still settled when the top of its range fits its request (``bound``: "top
of range", ``within`` "yes, at the top of its noise range": the row shows that top, and
tests/test_full_scale_cost.py holds it to the request); otherwise it shows the low end ("low end of range",
``within`` "unresolved, at least: ..."), a need the stage has at least, which alone the test can hold. ``--extend
SECONDS`` adds points at larger sizes (the fastest key grown 8x, 16x, ...) while such a stage remains and the next
run is expected within SECONDS (``measure``). A series that grows less
than ``NOISE`` over the points is predicted at its largest point (a cost hidden under the rehearsal's noise
is not seen).

Writes ``benchmarks/results/full_scale_cost.json``: ``stages`` (one row per stage: paper, stage, jobs,
threads, cpu_hours, gpu_hours, wall_min_per_job, peak_mb, mem_mb, runtime_min, within, gpu, device_mb,
flops, model, note, ...), ``measurements`` (per paper its path points and each job's CPU-s and peak MB, so
``--refit`` and tests/test_full_scale_cost.py predict again without running anything) and ``host``. Papers
measured earlier keep their entries. CPU seconds measured on a loaded machine are inflated (the load is
recorded with each run); the fit's constant takes most of that, the growth is inflated by the same factor.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "scripts"))

from repro.learning.step_cost import WEIGHT_AND_MOMENTS_BYTES  # noqa: E402
from repro.workflow import cost as C  # noqa: E402
from repro.workflow.config import load_config  # noqa: E402
from repro.workflow.entry import logged_startup, logged_usage  # noqa: E402

OUT = REPO / "benchmarks/results/full_scale_cost.json"
PARTITIONS = REPO / "slurm/partitions.yaml"
OVERLAYS = ("config/full.yaml", "config/rehearsal.yaml")
GROWTHS = (1.0, 2.0, 4.0)  # the fastest key's growth at each measured point
CUDA_CONTEXT_MB = 1024
# noise on a measured point: relative and absolute, CPU-s under load and peak MB of the allocator (the
# jitter of repeated points that did not change: 2.6/2.3/1.5 CPU-s of one figures stage, 739/657/790 MB of one
# training stage at sizes that barely moved)
CPU_NOISE, CPU_NOISE_S = 0.05, 0.5
PEAK_NOISE, PEAK_NOISE_MB = 0.05, 30.0
RESOLVED_SPAN = 4.0  # a prediction whose noise range spans more than this factor is not determined
EXTEND_MAX_T = 0.95  # an extension point stays short of full scale
EXTEND_MAX_PEAK_MB = 12_000  # and its largest job within half of this 24 GB machine
NOISE = 0.15  # growth over the measured points below this share of the first point: within noise


@functools.cache
def full_config() -> dict:
    """config/full.yaml over the default, read once per process (a refit reads it for every stage); callers
    only read it."""
    return load_config("config/full.yaml")


@functools.cache
def rehearsal_overlay() -> dict:
    return yaml.safe_load((REPO / "config/rehearsal.yaml").read_text())


@functools.cache
def partitions_and_devices() -> tuple[dict, dict]:
    return C.read_partitions(PARTITIONS)


def package(slug: str) -> str:
    return slug.replace("-", "_")


STAGE_CALL = re.compile(r"""\bstage\(\s*(?:stage_name\(\s*)?["'](\w+)["']""")
RESOURCES_KEY = re.compile(r"""\bresources\s*=\s*["'](\w+)["']""")


@functools.cache
def paper_stages(slug: str) -> dict[str, str]:
    """Each stage a paper's rule file declares (``stage("name", ...)``, ``stage(stage_name("name", suffix),
    ...)`` for a stage split into jobs, and ``figures(...)``) -> the config key of its resources (its
    ``resources=``, else its name): a stage may ask for another stage's resources (mosaic's attention_cost
    those of evaluate), and the row must hold it to what it asks. tests/test_full_scale_cost.py checks this
    reading against the stages the loaded workflow declares."""
    text = (REPO / "workflow/rules" / f"{slug}.smk").read_text()
    calls = list(STAGE_CALL.finditer(text))
    stages = {}
    for call, after in zip(calls, [c.start() for c in calls[1:]] + [len(text)]):
        key = RESOURCES_KEY.search(text, call.end(), after)
        stages[call.group(1)] = key.group(1) if key else call.group(1)
    return stages | ({"figures": "figures"} if re.search(r"\bfigures\(", text) else {})


def keys_of(slug: str) -> list[C.SizeKey]:
    """The paper's size keys: its rehearsal block's and those of the shared sources its rule file reads
    (``data/<source>/`` in its inputs)."""
    rehearsal = rehearsal_overlay()
    rules = (REPO / "workflow/rules" / f"{slug}.smk").read_text()
    sources = [s for s in (rehearsal.get("data") or {}) if f"data/{s}/" in rules]
    return C.size_keys(rehearsal, full_config(), slug, sources)


def stage_jobs(logs: Path, stage: str, stages: list[str]) -> dict[str, list[float]]:
    """Per log of ``stage`` (``<stage>.log`` or ``<stage>_<wildcards>.log``, not another stage's whose name
    starts with it): [CPU-s, peak MB], followed by [start-up CPU-s, start-up peak MB] where the log has them."""
    out = {}
    longer = [s for s in stages if s != stage and s.startswith(stage)]
    for log in sorted(logs.glob(f"{stage}*.log")):
        rest = log.stem[len(stage) :]
        if (rest and not rest.startswith("_")) or any(log.stem.startswith(s) for s in longer):
            continue
        usage, startup = logged_usage(log), logged_startup(log)
        if usage:
            out[log.stem] = [round(usage[0], 2), round(usage[1], 1)] + (
                [round(startup[0], 2), round(startup[1], 1)] if startup else []
            )
    return out


def host_flops() -> float:
    """Single-thread fp32 matmul FLOP/s of this machine (best of 5, 1024^2)."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    a = np.random.default_rng(0).standard_normal((1024, 1024), dtype=np.float32)
    best = math.inf
    with threadpool_limits(1):
        for _ in range(5):
            start = time.perf_counter()
            a @ a
            best = min(best, time.perf_counter() - start)
    return 2 * 1024**3 / best


def probe_of(slug: str):
    """The paper's ``gpu_probe`` module when it gives a work model (``STAGE`` and ``work``), else None."""
    import importlib

    try:
        probe = importlib.import_module(f"repro.papers.{package(slug)}.gpu_probe")
    except ModuleNotFoundError as err:
        if not str(err.name).endswith("gpu_probe"):
            raise
        return None
    return probe if hasattr(probe, "work") and hasattr(probe, "STAGE") else None


def count_arms(probe, section: dict, counted: dict) -> dict[str, dict]:
    """Each of the probe's arms (``arms(section)``: the other models, tasks or losses one job trains) counted at
    the section's sizes on the device the probe's step was: its FLOPs per sample over the step's (``share``,
    what :func:`work_of` weighs its samples by) and its device bytes (weights, moments and live peak at its own
    batch: the job's device memory is its largest arm's)."""
    from repro.learning.step_cost import count_step

    out = {}
    for name, (build, batch) in probe.arms(section).items():
        arm = count_step(build, section, batch, counted["counted_on"])
        share = float(f"{arm.flops_per_sample / counted['flops_per_sample']:.6g}")
        out[name] = {"share": share, "device_bytes": int(arm.device_bytes()), "batch": int(batch)}
    return out


def work_of(probe, section: dict, counted: dict) -> tuple[int, int]:
    """(samples, batch) of the probe's work model for ``section``; a probe with arms weighs their samples by the
    shares counted with the step (``counted['arms']``)."""
    if not hasattr(probe, "arms"):
        return probe.work(section)
    return probe.work(section, {name: arm["share"] for name, arm in counted["arms"].items()})


def work_device_bytes(work: dict) -> int:
    """Device bytes of a job the work model costs: the probe's step (weights, AdamW moments and its live peak) or,
    where the job trains other arms, the largest of them (one arm is on the device at a time)."""
    step = work["params"] * WEIGHT_AND_MOMENTS_BYTES + work["peak_live_bytes"]
    return max([step, *(arm["device_bytes"] for arm in work.get("arms", {}).values())])


def count_steps(slug: str) -> dict | None:
    """The probe's step at full.yaml's sizes counted (``repro.learning.step_cost``), with the stage it stands
    for and, for a probe with arms, each arm's FLOP share and device bytes; None for a paper without a work model."""
    from repro.learning.step_cost import count_step

    probe = probe_of(slug)
    if probe is None:
        return None
    section = full_config()["papers"][slug]
    arms = hasattr(probe, "arms")
    # the batch a job trains at does not depend on the arms' shares
    unit = {"arms": {name: {"share": 1.0} for name in probe.arms(section)}} if arms else {}
    _, batch = work_of(probe, section, unit)
    counted = {"stage": probe.STAGE, **count_step(probe.build, section, int(batch)).as_dict()}
    if arms:
        counted["arms"] = count_arms(probe, section, counted)
    return counted


def next_point_estimate(runs: list[dict], t_next: float) -> tuple[float, float]:
    """(wall s, largest job's peak MB) expected at ``t_next``: the first run's (start-up, imports, a base the
    sizes do not move) plus the part above it, grown per unit of t as it grew between the last two runs (never
    shrinking). Growing the whole wall instead underestimates: at small sizes the base hides the growth (one
    paper's 20 -> 38 s said 65 s next; its next point ran over 900 s)."""

    def peak(run: dict) -> float:
        return max((j[1] for jobs in run["jobs"].values() for j in jobs.values()), default=0.0)

    base_wall, base_peak = runs[0]["wall_s"], peak(runs[0])
    (t0, w0, p0), (t1, w1, p1) = ((r["t"], r["wall_s"], peak(r)) for r in runs[-2:])
    exponent = (t_next - t1) / max(t1 - t0, 1e-6)

    def grown(base: float, before: float, last: float, floor: float) -> float:
        above_before, above_last = max(before - base, floor), max(last - base, floor)
        return base + above_last * max(above_last / above_before, 1.0) ** exponent

    return grown(base_wall, w0, w1, 1.0), grown(base_peak, p0, p1, 10.0)


def run_group(cmd: list[str], cwd: Path, timeout: float) -> str:
    """Run ``cmd`` in ``cwd``; "" when it succeeded, else why not (its stderr's end). A run over ``timeout`` is
    stopped with every process it started (its process group): a Snakemake job left running would load the
    next measurements."""
    import signal

    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
                proc.communicate(timeout=30)
                break
            except (ProcessLookupError, subprocess.TimeoutExpired):
                continue
        return f"over {timeout:.0f} s"
    return (stderr[-2000:] or f"exit status {proc.returncode}") if proc.returncode else ""


def undetermined_stages(slug: str, measured: dict, host_rate: float) -> list[str]:
    """Stages whose prediction from ``measured`` so far is unresolved and not bounded by its request (the row
    gives the low end of its noise range): the stages a point at larger sizes would settle."""
    return [r["stage"] for r in predict_paper(slug, measured, host_rate) if r["bound"] == "low end of range"]


def measure(
    slug: str, work: Path, cores: int, timeout: int = 900, extend_s: float = 0.0, host_rate: float = 0.0
) -> dict:
    """Run the paper at each point of its path in ``work`` (a fresh copy), one after the other: the rehearsal
    and the fastest key grown 2x and 4x (``GROWTHS``). With ``extend_s``, points follow at twice the last
    growth while a stage is still undetermined (``undetermined_stages``), the next run is expected to take at
    most ``extend_s`` seconds and its largest job ``EXTEND_MAX_PEAK_MB`` (``next_point_estimate``), and t stays
    at most ``EXTEND_MAX_T``: larger sizes settle a growth that the noise hides at rehearsal sizes."""
    from workflow_tools import commit_copy, copy_workflow

    if work.exists():
        shutil.rmtree(work)
    copy_workflow(work)
    commit_copy(work)
    keys, stages = keys_of(slug), paper_stages(slug)
    measured = {"cores": cores, "step": C.step_for(keys, GROWTHS[1]), "runs": [], "train_step": count_steps(slug)}
    runs = measured["runs"]
    targets = [C.step_for(keys, g) if g > 1 else 0.0 for g in GROWTHS]
    while len(runs) < len(targets):
        t = targets[len(runs)]
        overlay = C.overlay_at(keys, t)
        (work / "config/cost-path.yaml").write_text(yaml.safe_dump(overlay, sort_keys=False))
        for folder in ("logs", "results"):
            shutil.rmtree(work / folder / slug, ignore_errors=True)
        load = os.getloadavg()[0]
        start = time.perf_counter()
        # an extension point gets twice the budget it was expected within, the three first the default
        limit = 2 * extend_s if len(runs) >= len(GROWTHS) else timeout
        args = ["--cores", str(cores), "--configfile", *OVERLAYS, "config/cost-path.yaml", "--", package(slug)]
        failure = run_group([sys.executable, "-m", "snakemake", *args], work, limit)
        wall = time.perf_counter() - start
        if failure:
            # the points measured so far stay; the stage rows say how many there are
            print(f"{slug} at t={t:.3f} failed ({wall:.0f} s): {failure}", flush=True)
            measured["stopped"] = f"t={t:.4f}: {failure[-300:]}"
            break
        values = {k.dotted: C.value_at(k, t) for k in keys if k.walks}
        jobs = {st: stage_jobs(work / "logs" / slug, st, list(stages)) for st in stages}
        runs.append(
            {
                "t_target": round(t, 5),
                "t": round(C.projected_t(keys, values), 5),
                "values": values,
                "load": [round(load, 2), round(os.getloadavg()[0], 2)],
                "wall_s": round(wall, 1),
                "jobs": {st: j for st, j in jobs.items() if j},
            }
        )
        print(f"{slug} t={t:.3f}: {wall:.0f} s wall, load {load:.1f}", flush=True)
        if extend_s and len(runs) == len(targets) >= len(GROWTHS):
            # the fastest key doubled again (t moves by the path's step for a doubling), short of full scale
            t_next = min(t + C.step_for(keys, 2.0), EXTEND_MAX_T)
            left = undetermined_stages(slug, measured, host_rate)
            wall_next, peak_next = next_point_estimate(runs, t_next)
            if left and t_next > t and wall_next <= extend_s and peak_next <= EXTEND_MAX_PEAK_MB:
                targets.append(t_next)
                print(f"{slug}: {', '.join(left)} undetermined, next t={t_next:.3f} (~{wall_next:.0f} s)", flush=True)
            elif left:
                measured["extension_stopped"] = (
                    f"{', '.join(left)} undetermined at t={runs[-1]['t']:.4f}; the next point (t={t_next:.4f}) "
                    f"would take ~{wall_next:.0f} s and ~{peak_next:.0f} MB (limits {extend_s:.0f} s, "
                    f"{EXTEND_MAX_PEAK_MB} MB, t <= {EXTEND_MAX_T})"
                )
    return measured


def predict_stage(slug: str, stage: str, measured: dict, keys: list[C.SizeKey], host_rate: float) -> dict | None:
    """The stage's row at full scale from its measured points (None when it was not measured). A resolved
    row gives the fit's prediction; an unresolved one the low end of its noise range (what the points
    establish at least), with the central fit under ``central``."""
    full = full_config()
    request = C.stage_request(full["papers"][slug], paper_stages(slug)[stage])
    partitions, devices = partitions_and_devices()
    points = []
    for run in measured["runs"]:
        if run["jobs"].get(stage):
            # the stage's largest job at this point (most CPU), with its start-up where logged
            job = max(run["jobs"][stage].values(), key=lambda j: j[0])
            peak = max(j[1] for j in run["jobs"][stage].values())
            points.append((C.projected_t(keys, run["values"]), job[0], peak, job[2:4] or None))
    if not points:
        return None
    ts, cpu, peak, startups = zip(*points)
    # the start-up (interpreter, imports, config) measured in every job is the fit's constant: the points then
    # fit only the growing part (repro.workflow.cost.fit_path); older logs without it fit the constant too
    measured_c = all(startups)
    cpu_c = float(np.mean([s[0] for s in startups])) if measured_c else None
    peak_c = float(np.mean([s[1] for s in startups])) if measured_c else None
    (time_fit, time_flat) = C.fit_or_flat(ts, cpu, NOISE, c=cpu_c)
    (memory_fit, memory_flat) = C.fit_or_flat(ts, peak, NOISE, c=peak_c)
    cpu_range = None if time_flat else C.fit_range(ts, cpu, CPU_NOISE, CPU_NOISE_S, c=cpu_c)
    peak_range = None if memory_flat else C.fit_range(ts, peak, PEAK_NOISE, PEAK_NOISE_MB, c=peak_c)
    spans = [r[1] / max(r[0], 1e-9) for r in (cpu_range, peak_range) if r]
    # fewer than three points (a run that stopped: a fixture smaller than the walked size) determine no growth
    resolved = len(points) >= 3 and all(x <= RESOLVED_SPAN for x in spans)
    jobs_rehearsal = max(len(run["jobs"].get(stage, {})) for run in measured["runs"])
    # a stage with one job per seed multiplies with the seeds; a stage of one job (figures) stays one
    jobs = int(round(jobs_rehearsal * C.job_multiplier(keys))) if jobs_rehearsal > 1 else 1
    threads, gpu = int(request["threads"]), int(request["gpu"])
    partition = C.partition_for(request, partitions)
    device = devices.get(partition or "") if gpu else None
    counted = measured.get("train_step")
    work = None
    if gpu and counted and counted["stage"] == stage:
        samples, batch = work_of(probe_of(slug), full["papers"][slug], counted)
        if int(batch) != counted["batch"]:
            raise ValueError(
                f"{slug}: the recorded step was counted at batch {counted['batch']}, full.yaml's is "
                f"{batch}: run python benchmarks/full_scale_cost.py --count-steps {slug}"
            )
        precision = (full["papers"][slug].get("train") or {}).get("precision", "fp32")
        work = {"samples": int(samples), "precision": precision, **counted}
    if work:
        # the work model sets the time: the path's CPU seconds do not enter the row or its resolution
        cpu_range = None
        spans = [r[1] / max(r[0], 1e-9) for r in (peak_range,) if r]
        resolved = len(points) >= 3 and all(x <= RESOLVED_SPAN for x in spans)

    def need(cpu_at_1: float, peak_mb: float) -> dict:
        # work per job beyond the path (layers, sweep points: repro.workflow.cost.length_multiplier) scales
        # the growing part of the CPU seconds
        cpu_s = time_fit.c + max(cpu_at_1 - time_fit.c, 0.0) * C.length_multiplier(keys)
        flops = device_mb = None
        if work:
            flops = work["flops_per_sample"] * work["samples"]
            rate = C.device_rate(device, work["precision"]) if device else math.nan
            wall_min = (time_fit.c + flops / rate) / 60.0
            device_mb = work_device_bytes(work) / 2**20 + CUDA_CONTEXT_MB
        elif gpu:
            flops = (cpu_s - time_fit.c) * host_rate
            wall_min = (time_fit.c + (flops / C.device_rate(device) if device else math.nan)) / 60.0
            device_mb = max(peak_mb - memory_fit.c, 0.0) + CUDA_CONTEXT_MB
        else:
            wall_min = cpu_s / threads / 60.0
        hours = wall_min * jobs / 60.0
        return {
            "cpu_hours": None if gpu else round(hours * threads, 4),
            "gpu_hours": round(hours * gpu, 4) if gpu else None,
            "wall_min_per_job": round(wall_min, 2),
            "peak_mb": int(math.ceil(peak_mb)),
            "device_mb": None if device_mb is None else int(math.ceil(device_mb)),
            "flops": None if flops is None else float(f"{flops:.4g}"),
        }

    central = need(time_fit.predict(1.0), memory_fit.predict(1.0))
    request_row = {
        "threads": threads,
        "mem_mb": int(request["mem_mb"]),
        "runtime_min": int(request["runtime"]),
        "gpu": gpu,
    }
    low = top = None
    shown, bounded = central, False
    if not resolved:
        low = need(
            min(time_fit.predict(1.0), cpu_range[0]) if cpu_range else time_fit.predict(1.0),
            min(memory_fit.predict(1.0), peak_range[0]) if peak_range else memory_fit.predict(1.0),
        )
        # the top of the range bounds the need only where the points show a growth to bound (three or more)
        if len(points) >= 3:
            top = need(
                max(time_fit.predict(1.0), cpu_range[1]) if cpu_range else time_fit.predict(1.0),
                max(memory_fit.predict(1.0), peak_range[1]) if peak_range else memory_fit.predict(1.0),
            )
        bounded = top is not None and not C.request_problems(request_row | top, partitions, devices)
        shown = top if bounded else low
    notes = [
        f"{name} grew <{NOISE:.0%} over the measured points (within noise: predicted at its largest)"
        for name, is_flat in (("CPU-s", time_flat and not work), ("peak MB", memory_flat))
        if is_flat
    ]
    if len(points) < 3:
        notes.append(f"only {len(points)} measured points")
    if not resolved:
        notes.append(
            f"unresolved: noise of {CPU_NOISE:.0%} + {CPU_NOISE_S} s (CPU) / {PEAK_NOISE:.0%} + {PEAK_NOISE_MB:.0f} MB "
            f"(peak) on the points moves the prediction {max(spans, default=math.inf):,.0g}x (more than {RESOLVED_SPAN:g}x): the "
            "rehearsal's sizes do not determine the growth; "
            + (
                "the row gives the top of that range, which is within the request"
                if bounded
                else "the row gives the low end of the range"
            )
        )
    row = {
        "paper": slug,
        "stage": stage,
        "jobs": jobs,
        "threads": threads,
        **shown,
        **request_row,
        "resolved": resolved,
        # how the row's needs relate to the prediction: the fit's own, or an end of its noise range
        "bound": "fit" if resolved else ("top of range" if bounded else "low end of range"),
        "central": None if resolved else central,
        "range": None if resolved else {"low": low, "top": top},
        "model": (
            f"work model: {work['samples']:,} samples x {work['flops_per_sample']:.3g} FLOPs (step counted on "
            f"{work['counted_on']}) at {work['precision']}, batch {work['batch']}; start-up {time_fit.c:.3g} CPU-s"
            if work
            else f"CPU-s {time_fit.describe()}"
        )
        + f"; peak MB {memory_fit.describe()}",
        "work": work,
        "measured": {"t": [round(t, 5) for t in ts], "cpu_s": list(cpu), "peak_mb": list(peak)},
        # the extrapolation (per job, before threads and device) when noise moves the measured points
        "cpu_s_range": None if cpu_range is None else [float(f"{v:.4g}") for v in cpu_range],
        "peak_mb_range": None if peak_range is None else [float(f"{v:.4g}") for v in peak_range],
        "note": "; ".join(notes),
    }
    problems = C.request_problems(row, partitions, devices)
    verdict = "yes" if not problems else "no: " + "; ".join(problems)
    if resolved:
        row["within"] = verdict
    elif row["bound"] == "top of range":
        row["within"] = "yes, at the top of its noise range"
    else:
        row["within"] = f"unresolved, at least: {verdict}"
    return row


def predict_paper(slug: str, measured: dict, host_rate: float) -> list[dict]:
    keys = keys_of(slug)
    rows = [predict_stage(slug, st, measured, keys, host_rate) for st in paper_stages(slug)]
    return [r for r in rows if r]


def load_results(path: Path = OUT) -> dict:
    """The recorded results, re-read before each write so that runs of other papers keep their entries."""
    return json.loads(path.read_text()) if path.is_file() else {"stages": [], "measurements": {}, "host": {}}


def write_results(results: dict, path: Path = OUT) -> None:
    order = {s: i for i, s in enumerate(load_config()["papers"])}
    results["stages"].sort(key=lambda r: (order.get(r["paper"], 999), r["paper"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1) + "\n")


def print_table(rows: list[dict]) -> None:
    def fmt(v, f):
        return "" if v is None else format(v, f)

    print(
        f"{'paper':<22}{'stage':<13}{'jobs':>5}{'CPU-h':>9}{'GPU-h':>8}{'peak MB':>10}{'mem_mb':>9}"
        f"{'min/job':>9}{'runtime':>8}{'dev MB':>9}{'FLOPs':>10}  within"
    )
    for r in rows:
        print(
            f"{r['paper']:<22}{r['stage']:<13}{r['jobs']:>5}{fmt(r['cpu_hours'], '9.2f')}{fmt(r['gpu_hours'], '8.2f')}"
            f"{r['peak_mb']:>10,}{r['mem_mb']:>9,}{r['wall_min_per_job']:>9.1f}{r['runtime_min']:>8,}"
            f"{fmt(r['device_mb'], '9,')}{fmt(r['flops'], '10.2e')}  {r['within']}"
        )


def refit(results: dict, slugs: list[str]) -> None:
    rate = float(results["host"]["fp32_flops_per_s"])
    for slug in slugs:
        rows = predict_paper(slug, results["measurements"][slug], rate)
        results["stages"] = [r for r in results["stages"] if r["paper"] != slug] + rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("papers", nargs="*", help="papers to measure (with --refit: default every measured one)")
    parser.add_argument("--cores", type=int, default=1)
    parser.add_argument("--refit", action="store_true", help="predict from the recorded measurements only")
    parser.add_argument("--table", action="store_true", help="print the recorded table")
    parser.add_argument(
        "--count-steps", action="store_true", help="recount the probes' training steps of measured papers, then refit"
    )
    parser.add_argument(
        "--extend",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="add points at larger sizes while a stage is undetermined and the next run is expected within SECONDS",
    )
    parser.add_argument("--keep", type=Path, help="run in this folder (one subfolder per paper) and keep it")
    parser.add_argument("--output", type=Path, default=OUT)
    args = parser.parse_args(argv)
    results = load_results(args.output)
    if args.table:
        print_table(results["stages"])
        return 0
    if not results.get("host"):
        results["host"] = {"fp32_flops_per_s": host_flops(), "cpus": os.cpu_count()}
        write_results(results, args.output)
    slugs = args.papers or list(results["measurements"])
    if args.count_steps:
        for slug in slugs:
            results["measurements"][slug]["train_step"] = count_steps(slug)
        write_results(results, args.output)
    elif not args.refit:
        for slug in slugs:
            with tempfile.TemporaryDirectory() as tmp:
                work = args.keep / slug if args.keep else Path(tmp) / "wf"
                measured = measure(
                    slug, work, args.cores, extend_s=args.extend, host_rate=float(results["host"]["fp32_flops_per_s"])
                )
            results = load_results(args.output)
            results["measurements"][slug] = measured
            write_results(results, args.output)
    results = load_results(args.output)
    refit(results, slugs)
    write_results(results, args.output)
    rows = [r for r in results["stages"] if r["paper"] in slugs]
    print_table(rows)
    # exit status 1 when a stage's need (or, unresolved, the low end it has at least) exceeds its request
    return 1 if any("no: " in r["within"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
