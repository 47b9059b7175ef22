"""The full-scale cost prediction (benchmarks/full_scale_cost.py, repro.workflow.cost), checked without running
the rehearsal: the fit against an independent computation on synthetic data, and the committed
benchmarks/results/full_scale_cost.json against what config/full.yaml requests and slurm/partitions.yaml
admits."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from repro.workflow import cost as C
from repro.workflow.config import load_config

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks/results/full_scale_cost.json"
PARTITIONS = REPO / "slurm/partitions.yaml"


def bench():
    spec = importlib.util.spec_from_file_location("full_scale_cost", REPO / "benchmarks/full_scale_cost.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def results() -> dict:
    return json.loads(RESULTS.read_text())


# ---------------------------------------------------------------- the fit, on synthetic stages


def power_law(sizes: dict[str, float], c: float, amplitude: float, exponents: dict[str, float]) -> float:
    """The cost model written directly in the sizes (not along any path): the independent computation."""
    return c + amplitude * math.prod(sizes[k] ** b for k, b in exponents.items())


KEYS = [
    C.SizeKey(("papers", "x", "samples"), 64.0, 200_000.0),
    C.SizeKey(("papers", "x", "epochs"), 1.0, 40.0),
    C.SizeKey(("papers", "x", "width"), 8.0, 384.0),
]


@pytest.mark.parametrize(
    "exponents",
    [{"samples": 1.0, "epochs": 1.0, "width": 2.0}, {"samples": 1.0}, {"width": 0.5, "epochs": 1.0}, {}],
)
def test_path_fit_recovers_a_power_law_at_full_scale(exponents):
    """Three points on the path (fastest key x1, x2, x4) of c + A prod size^b, fitted and extrapolated to
    t = 1, give the power law evaluated directly at full.yaml's sizes, whatever the split of exponents."""
    c, amplitude = 2.5, 1e-4
    ts = [C.step_for(KEYS, g) if g > 1 else 0.0 for g in (1, 2, 4)]
    ys = [power_law({k.path[-1]: C.value_at(k, t) for k in KEYS}, c, amplitude, exponents) for t in ts]
    fit = C.fit_path(ts, ys)
    direct = power_law({k.path[-1]: k.full for k in KEYS}, c, amplitude, exponents)
    assert fit.predict(1.0) == pytest.approx(direct, rel=0.01)
    # a growth the rehearsal points show is not flattened into the constant
    assert fit.c == pytest.approx(c, rel=0.05, abs=1e-3) or not exponents


def test_path_fit_with_integer_rounding_and_noise():
    """Integer keys rounded on the path (each run's t projected back on the path): without noise the
    prediction is within 30 % of the direct power law; with noise of 3 % the prediction can go far off, and
    ``fit_range`` (what a row reports) brackets the direct value."""
    keys = [C.SizeKey(("papers", "x", "n"), 64, 20_000), C.SizeKey(("papers", "x", "epochs"), 2, 30)]
    ts, ys = [], []
    for g in (1, 2, 4):
        t = C.step_for(keys, g) if g > 1 else 0.0
        values = {k.dotted: C.value_at(k, t) for k in keys}
        assert all(isinstance(v, int) for v in values.values())
        ts.append(C.projected_t(keys, values))
        ys.append(power_law({k.path[-1]: values[k.dotted] for k in keys}, 3.0, 1e-3, {"n": 1.0, "epochs": 1.0}))
    direct = power_law({"n": 20_000, "epochs": 30}, 3.0, 1e-3, {"n": 1.0, "epochs": 1.0})
    assert 0.7 < C.fit_path(ts, ys).predict(1.0) / direct < 1.3
    noisy = [y * (1 + e) for y, e in zip(ys, (0.03, -0.03, 0.03))]
    low, high = C.fit_range(ts, noisy, 0.03)
    assert low < direct < high


def test_a_measured_start_up_pins_the_constant_and_narrows_the_noise_range():
    """With the start-up measured (the constant held, not fitted), three noiseless points give the direct
    power law, and the same 5 % + 0.5 s noise that lets a free constant trade against the growth moves the
    prediction over a range at least ten times narrower (the reason the logs record the start-up)."""
    exponents = {"samples": 1.0, "epochs": 1.0}
    ts = [C.step_for(KEYS, g) if g > 1 else 0.0 for g in (1, 2, 4)]
    c, amplitude = 4.0, 0.08  # 5 s of work at the rehearsal, beside 4 s of start-up
    ys = [power_law({k.path[-1]: C.value_at(k, t) for k in KEYS}, c, amplitude, exponents) for t in ts]
    direct = power_law({k.path[-1]: k.full for k in KEYS}, c, amplitude, exponents)
    assert C.fit_path(ts, ys, c=c).predict(1.0) == pytest.approx(direct, rel=0.01)
    free_low, free_high = C.fit_range(ts, ys, 0.05, 0.5)
    held_low, held_high = C.fit_range(ts, ys, 0.05, 0.5, c=c)
    assert held_low < direct < held_high
    assert held_high / held_low * 10 <= free_high / free_low


PROBE_STAGE = """
def main(job):
    sum(i * i for i in range(300_000))
"""
PROBE_RUN = """
import sys
from types import SimpleNamespace
from repro.workflow.entry import run
params = SimpleNamespace(entry="probe_stage", compute_threads=1)
run(SimpleNamespace(log=[sys.argv[1]], params=params, input=None, output=None, wildcards=None, threads=1, rule="x"))
"""


def test_a_stage_log_records_its_start_up_and_the_benchmark_reads_it(tmp_path):
    """A stage run through the one entry point logs its start-up after its usage; the benchmark reads both
    (start-up at most the whole), and a log written before start-ups were recorded gives the usage alone."""
    import os
    import subprocess
    import sys

    (tmp_path / "probe_stage.py").write_text(PROBE_STAGE)
    logs = tmp_path / "logs"
    logs.mkdir()
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO / "scripts")])}
    subprocess.run([sys.executable, "-c", PROBE_RUN, str(logs / "train.log")], check=True, env=env, timeout=120)
    (logs / "evaluate.log").write_text("x done in 1.0 s (process: 2.5 CPU-s, peak 300 MB)\n")
    jobs = bench().stage_jobs(logs, "train", ["train", "evaluate"])
    cpu, peak, startup_cpu, startup_mb = jobs["train"]
    assert 0 < startup_cpu <= cpu and 0 < startup_mb <= peak
    assert bench().stage_jobs(logs, "evaluate", ["train", "evaluate"]) == {"evaluate": [2.5, 300.0]}


def test_a_constant_stage_extrapolates_to_its_constant():
    fit = C.fit_path([0.0, 0.1, 0.2], [3.0, 3.0, 3.0])
    assert fit.predict(1.0) == pytest.approx(3.0)


def test_path_endpoints_are_the_rehearsal_and_full_sizes():
    for key in KEYS:
        assert C.value_at(key, 0.0) == pytest.approx(key.rehearsal)
        assert C.value_at(key, 1.0) == pytest.approx(key.full)
    seeds = C.SizeKey(("papers", "x", "seeds"), [0, 1], [0, 1, 2, 3, 4])
    assert not seeds.walks and C.job_multiplier([seeds]) == 2.5
    layers = C.SizeKey(("papers", "x", "hidden"), [32], [512, 512])
    assert C.value_at(layers, 1.0) == [512] and C.length_multiplier([layers]) == 2.0


def test_a_shrinking_integer_key_walks_through_divisors_of_its_rehearsal_value():
    """A downsampling factor of 12 at the rehearsal and 1 at full scale stays a divisor of 12 on the path (a
    grid the rehearsal's factor divides is divided by every point's), and ends at full scale's value."""
    key = C.SizeKey(("papers", "x", "downsample"), 12, 1)
    walked = [C.value_at(key, t) for t in (0.0, 0.15, 0.3, 0.5, 0.8)]
    assert all(12 % v == 0 for v in walked) and walked[0] == 12
    assert walked == sorted(walked, reverse=True) and walked[-1] < 12
    assert C.value_at(key, 1.0) == 1


def test_request_problems_name_every_excess():
    partitions = {"cpu": {"max_gpu": 0, "max_mem_mb": 1000}, "gpu": {"max_gpu": 1}}
    devices = {"gpu": {"gpu_mem_mb": 500}}
    row = {"threads": 1, "mem_mb": 800, "runtime_min": 10, "gpu": 0, "peak_mb": 900, "wall_min_per_job": 11}
    problems = C.request_problems(row, partitions, devices)
    assert len(problems) == 2 and "peak" in problems[0] and "runtime" in problems[1]
    assert C.request_problems(row | {"mem_mb": 2000, "peak_mb": 10, "wall_min_per_job": 1}, partitions, devices)
    gpu_row = row | {"gpu": 1, "peak_mb": 10, "wall_min_per_job": 1, "device_mb": 600}
    assert C.request_problems(gpu_row, partitions, devices) == ["device memory 600 MB > gpu's 500 MB"]
    assert C.request_problems(gpu_row | {"device_mb": 400}, partitions, devices) == []


# ---------------------------------------------------------------- the committed table against the requests


def test_every_request_fits_its_partition():
    """Every stage's first request (config/full.yaml) is admitted by the partition of its kind."""
    partitions, _ = C.read_partitions(PARTITIONS)
    full = load_config("config/full.yaml")
    bad = []
    for slug, section in full["papers"].items():
        for stage in section.get("resources") or {}:
            request = C.stage_request(section, stage)
            partition = C.partition_for(request, partitions)
            if partition is None:
                bad.append(f"{slug} {stage}: no partition of its kind")
                continue
            bad += [f"{slug} {stage}: {p}" for p in C.limit_problems(request, partitions[partition])]
    assert not bad, "\n".join(bad)


def test_gpu_partitions_declare_their_device():
    partitions, devices = C.read_partitions(PARTITIONS)
    for name, limits in partitions.items():
        if int(limits.get("max_gpu", 0)) > 0:
            assert {"gpu_mem_mb", "fp32_tflops", "bf16_tflops", "planning_utilisation"} <= set(devices.get(name, {})), (
                name
            )


def test_predicted_needs_are_within_the_requests():
    """Each stage's predicted peak, time and device memory at full scale are within what it requests, and its
    request within its partition's limits (recomputed from the rows, not read from their ``within``). An
    unresolved row gives the top of its noise range where that fits (a need no noise of the stated size
    exceeds), else the low end: a need even favourable noise predicts."""
    partitions, devices = C.read_partitions(PARTITIONS)
    rows = results()["stages"]
    assert rows
    bad = [f"{r['paper']} {r['stage']}: {p}" for r in rows for p in C.request_problems(r, partitions, devices)]
    assert not bad, "\n".join(bad) + "\n(raise the request in config/full.yaml, then --refit)"


def test_unresolved_rows_say_so():
    """A row whose prediction the measured points do not determine (noise of a few per cent moves it by more
    than RESOLVED_SPAN) says so in its note and keeps its central fit and its range. It shows the top of the
    range when that is within its request (then the test above holds the whole range to the request), else
    the low end, and its verdict says which; only three or more points bound a growth from above."""
    span = bench().RESOLVED_SPAN
    partitions, devices = C.read_partitions(PARTITIONS)
    for r in results()["stages"]:
        ranges = [x for x in (r["cpu_s_range"], r["peak_mb_range"]) if x]
        wide = any(hi / max(lo, 1e-9) > span for lo, hi in ranges)
        assert r["resolved"] == (not wide and len(r["measured"]["t"]) >= 3), (r["paper"], r["stage"])
        if r["resolved"]:
            assert (
                r["bound"] == "fit" and r["range"] is None and (r["within"] == "yes" or r["within"].startswith("no: "))
            )
            continue
        assert "unresolved" in r["note"] and r["central"] and r["range"]["low"]
        low, top = r["range"]["low"], r["range"]["top"]
        assert low["peak_mb"] <= r["central"]["peak_mb"]
        request = {k: r[k] for k in ("threads", "mem_mb", "runtime_min", "gpu")}
        top_fits = top is not None and not C.request_problems(request | top, partitions, devices)
        assert top is None or (top["peak_mb"] >= r["central"]["peak_mb"] >= low["peak_mb"])
        if top_fits:
            assert r["bound"] == "top of range" and r["within"] == "yes, at the top of its noise range"
            assert all(r[k] == top[k] for k in top), (r["paper"], r["stage"])
        else:
            assert r["bound"] == "low end of range" and r["within"].startswith("unresolved, at least")
            assert all(r[k] == low[k] for k in low), (r["paper"], r["stage"])
        assert top is not None or len(r["measured"]["t"]) < 3


def test_the_top_of_a_noise_range_bounds_a_row_only_where_it_fits_the_request():
    """The same measured points give a row bounded by its request (the top of the range shown, and held) under
    a generous request, and the low end with "unresolved, at least" under a request the top exceeds."""
    b, data = bench(), results()
    rate = float(data["host"]["fp32_flops_per_s"])
    row = next(
        r
        for r in data["stages"]
        if r["bound"] == "top of range" and r["range"]["top"]["peak_mb"] > r["range"]["low"]["peak_mb"]
    )
    slug, stage = row["paper"], row["stage"]
    keys = b.keys_of(slug)
    assert b.predict_stage(slug, stage, data["measurements"][slug], keys, rate) == row
    resources = b.full_config()["papers"][slug].setdefault("resources", {}).setdefault(stage, {})
    saved = dict(resources)
    try:
        resources["mem_mb"] = row["range"]["low"]["peak_mb"]  # the low end fits, the top does not
        tight = b.predict_stage(slug, stage, data["measurements"][slug], keys, rate)
    finally:
        resources.clear()
        resources.update(saved)
    assert tight["bound"] == "low end of range" and tight["within"].startswith("unresolved, at least")
    assert tight["peak_mb"] == row["range"]["low"]["peak_mb"]


def test_the_table_is_the_fit_of_its_measurements_under_todays_config():
    """Refitting the recorded measurements with today's config/full.yaml and slurm/partitions.yaml gives the
    committed rows: a changed request or size, or a hand-edited row, needs ``full_scale_cost.py --refit``."""
    b, data = bench(), results()
    rate = float(data["host"]["fp32_flops_per_s"])
    for slug, measured in data["measurements"].items():
        fresh = b.predict_paper(slug, measured, rate)
        committed = [r for r in data["stages"] if r["paper"] == slug]
        assert fresh == committed, f"{slug}: run python benchmarks/full_scale_cost.py --refit {slug}"


def test_every_measured_paper_has_a_row_per_stage():
    """A measured paper has a row for every stage its rule file declares (a stage whose jobs wrote no usage
    line would otherwise drop out of the table), and only papers with a rehearsal block are measured."""
    rehearsal = yaml.safe_load((REPO / "config/rehearsal.yaml").read_text())
    data = results()
    missing = []
    for slug in data["measurements"]:
        assert slug in rehearsal["papers"], slug
        rows = {r["stage"] for r in data["stages"] if r["paper"] == slug}
        missing += [f"{slug} {s}" for s in bench().paper_stages(slug) if s not in rows]
    assert not missing, "not measured: " + ", ".join(missing)


def test_rows_have_what_the_docs_block_reads():
    """repro.reporting.docs.paper_scale_block reads these keys of each row."""
    keys = {"paper", "stage", "cpu_hours", "gpu_hours", "peak_mb", "mem_mb", "runtime_min", "within"}
    for row in results()["stages"]:
        assert keys <= set(row), row["stage"]
        assert (row["gpu_hours"] is None) == (not row["gpu"]) and (row["cpu_hours"] is None) == bool(row["gpu"])


def test_a_paper_walks_the_shared_source_it_reads():
    """loda reads data/images/ (the digits): the rehearsal's subsample of MNIST walks with its own keys."""
    dotted = {k.dotted for k in bench().keys_of("loda") if k.walks}
    assert "data.images.subsample.mnist.train" in dotted and "papers.loda.pretrain.epochs" in dotted
    assert not any(d.startswith("data.") for d in (k.dotted for k in bench().keys_of("survfd")))


def test_a_flat_series_is_predicted_at_its_largest_point():
    """Growth under the noise share is no trend: the prediction is the largest measured point, not an
    exponential through three noisy values (739, 657, 790 MB would otherwise extrapolate to exabytes)."""
    fit, is_flat = C.fit_or_flat([0.0, 0.23, 0.35], [739.0, 657.0, 790.0], 0.15)
    assert is_flat and fit.predict(1.0) == 790.0
    fit, is_flat = C.fit_or_flat([0.0, 0.23, 0.35], [300.0, 430.0, 660.0], 0.15)
    assert not is_flat and fit.predict(1.0) > 660.0


def test_a_docs_block_explains_unresolved_rows_only_where_it_shows_them():
    """The docs page's cost table says what "unresolved" means (a low end, a GPU time from CPU seconds) under a
    table that has such a row, and adds nothing under a table whose rows are all resolved."""
    from repro.reporting.docs import UNRESOLVED_LEGEND, paper_scale_block

    rows = results()["stages"]
    by_paper = {r["paper"]: [] for r in rows}
    for r in rows:
        by_paper[r["paper"]].append(r["resolved"])
    unresolved = next(p for p, flags in by_paper.items() if not all(flags))
    resolved = next(p for p, flags in by_paper.items() if all(flags))
    assert UNRESOLVED_LEGEND in paper_scale_block(unresolved, REPO)
    assert UNRESOLVED_LEGEND not in paper_scale_block(resolved, REPO)


def test_a_docs_block_shows_the_work_model_of_its_gpu_training_stages():
    """cod-lite's page gives its training stage's samples, FLOPs and device memory from the work model;
    survfd (no GPU stage) has no such table."""
    from repro.reporting.docs import WORK_LEGEND, paper_scale_block

    row = next(r for r in results()["stages"] if (r["paper"], r["stage"]) == ("cod-lite", "train"))
    block = paper_scale_block("cod-lite", REPO)
    assert WORK_LEGEND in block and f"{row['work']['samples']:,}" in block and f"{row['flops']:.2e}" in block
    assert WORK_LEGEND not in paper_scale_block("survfd", REPO)


def probes_with_work() -> dict:
    """slug -> the paper's gpu_probe module, for the papers whose probe gives a work model."""
    return {slug: probe for slug in load_config()["papers"] if (probe := bench().probe_of(slug))}


def test_gpu_training_rows_come_from_their_probes_work_model():
    """Every measured GPU stage a probe stands for is costed by the work model (FLOPs = FLOPs per counted
    sample x the job's samples; device memory = weights and moments + the step's live peak + context, of the
    job's largest arm where it trains several), not by
    the rehearsal's CPU seconds, whose CPU-s range then does not decide the row's resolution."""
    rows = {(r["paper"], r["stage"]): r for r in results()["stages"]}
    probes = probes_with_work()
    covered = 0
    for slug, probe in probes.items():
        row = rows.get((slug, probe.STAGE))
        if row is None:
            continue
        covered += 1
        work = row["work"]
        assert row["gpu"] and work and row["cpu_s_range"] is None, slug
        assert work["precision"] == (load_config("config/full.yaml")["papers"][slug].get("train") or {}).get(
            "precision", "fp32"
        ), slug
        assert row["flops"] == pytest.approx(work["flops_per_sample"] * work["samples"], rel=1e-3), slug
        arms = [arm["device_bytes"] for arm in work.get("arms", {}).values()]
        state_mb = max([work["params"] * 12 + work["peak_live_bytes"], *arms]) / 2**20
        assert row["device_mb"] == math.ceil(state_mb + bench().CUDA_CONTEXT_MB), slug
    assert covered >= 10


def test_a_probes_work_follows_the_config():
    """Each probe's ``work`` reads the config: the rehearsal's sizes give fewer samples per job than
    full.yaml's (a work model with constants would not move)."""
    full = load_config("config/full.yaml")["papers"]
    rehearsal = load_config("config/full.yaml", "config/rehearsal.yaml")["papers"]
    for slug, probe in probes_with_work().items():
        counted = results()["measurements"][slug]["train_step"]
        samples_full, batch_full = bench().work_of(probe, full[slug], counted)
        samples_small, _ = bench().work_of(probe, rehearsal[slug], counted)
        assert samples_full > samples_small > 0 and batch_full > 0, slug


@pytest.mark.parametrize("slug", ["pai-graphon", "ccdb", "pdrf", "gpo"])
def test_recorded_step_counts_are_todays(slug):
    """The recorded count of a probe's step, and of its arms' FLOP shares where it has arms (gpo: GPO, FNO and
    Galerkin on Darcy and NS), is what counting it now gives (a changed model or size needs
    ``full_scale_cost.py --count-steps``)."""
    recorded = results()["measurements"][slug]["train_step"]
    assert recorded == bench().count_steps(slug)


def test_a_probe_with_arms_weighs_each_by_its_counted_share():
    """Flower's train job trains every (task, model) arm: its work is each arm's pairs weighed by the arm's
    counted FLOP share, so doubling one arm's share adds that arm's samples once more, and the probe's own arm
    (Flower on shear_flow) is counted at a share of exactly 1 and at the probe's device bytes."""
    probe = bench().probe_of("flower")
    section = load_config("config/full.yaml")["papers"]["flower"]
    counted = results()["measurements"]["flower"]["train_step"]
    shares = {name: arm["share"] for name, arm in counted["arms"].items()}
    assert set(shares) == set(probe.arms(section)) and shares["advection/flower"] == 1.0
    assert counted["arms"]["advection/flower"]["device_bytes"] == counted["params"] * 12 + counted["peak_live_bytes"]
    base, _ = probe.work(section, shares)
    doubled, _ = probe.work(section, shares | {"wave/unet": 2 * shares["wave/unet"]})
    alone, _ = probe.work(section, dict.fromkeys(shares, 0.0) | {"wave/unet": shares["wave/unet"]})
    assert doubled - base == pytest.approx(alone, rel=1e-6) and alone > 0


def test_a_jobs_device_memory_is_its_largest_arms():
    """A job that trains arms one after the other needs the device memory of the largest (flower: Flower on the
    maze's 256 x 256 grid, twice shear flow's points), not the probe's."""
    step = {"params": 10, "peak_live_bytes": 100}
    assert bench().work_device_bytes(step) == 220
    assert bench().work_device_bytes(step | {"arms": {"a": {"device_bytes": 50}, "b": {"device_bytes": 900}}}) == 900
    flower = results()["measurements"]["flower"]["train_step"]
    largest = max(flower["arms"], key=lambda name: flower["arms"][name]["device_bytes"])
    assert largest == "wave/flower"


def test_cod_lites_job_is_sized_by_its_distillation():
    """CoD-Lite's distillation trains the student and the fake score (two denoisers) and a discriminator beside
    the frozen teacher: its recorded device bytes hold at least two denoisers' weights and moments more than the
    teacher step, and it is the job's largest arm (the row's device memory)."""
    counted = results()["measurements"]["cod-lite"]["train_step"]
    arms = counted["arms"]
    assert max(arms, key=lambda name: arms[name]["device_bytes"]) == "distill"
    assert arms["distill"]["device_bytes"] >= arms["teacher"]["device_bytes"] + 2 * counted["params"] * 12
    row = next(r for r in results()["stages"] if (r["paper"], r["stage"]) == ("cod-lite", "train"))
    assert row["device_mb"] == math.ceil(arms["distill"]["device_bytes"] / 2**20 + bench().CUDA_CONTEXT_MB)


def test_the_fits_closed_form_least_squares_equal_scipys_nnls():
    """The fit's vectorised solve (c and a >= 0 of ``c + a exp(beta t)`` at every beta, one or two columns in
    closed form) gives scipy's NNLS residual and fitted values, with the constant free or held."""
    from scipy.optimize import nnls

    rng = np.random.default_rng(0)
    betas = np.array([0.0, 0.5, 3.0, 12.0, 40.0])
    for _ in range(40):
        t = np.sort(rng.uniform(0, 0.7, size=rng.integers(3, 7)))
        y = rng.uniform(-1, 5, size=t.size) * rng.choice([1.0, 10.0]) + rng.choice([0.0, 3.0]) * np.exp(4 * t)
        free = C._residuals(t, y, betas, None)
        held = C._residuals(t, y, betas, 0.7)
        for i, beta in enumerate(betas):
            grows = np.exp(beta * t)
            (c, a), residual = nnls(np.column_stack([np.ones_like(t), grows]), y)
            assert free[i, 0] == pytest.approx(residual, rel=1e-7, abs=1e-9)
            # the fitted values (at beta = 0 the two columns are one, and only c + a is defined)
            assert free[i, 1] + free[i, 2] * grows == pytest.approx(c + a * grows, rel=1e-6, abs=1e-7)
            (a,), residual = nnls(grows[:, None], y - 0.7)
            assert held[i] == pytest.approx([residual, 0.7, a], rel=1e-7, abs=1e-9)


def test_an_extension_point_is_expected_to_grow_as_the_last_two_did():
    """The next point's wall and peak: the first run's, plus the part above it grown per unit of t as it grew
    between the last two runs (never shrinking)."""
    runs = [
        {"t": 0.0, "wall_s": 10.0, "jobs": {"train": {"train": [4.0, 300.0]}}},
        {"t": 0.1, "wall_s": 12.0, "jobs": {"train": {"train": [5.0, 320.0]}}},
        {"t": 0.2, "wall_s": 20.0, "jobs": {"train": {"train": [9.0, 400.0]}, "figures": {"figures": [1.0, 200.0]}}},
    ]
    wall, peak = bench().next_point_estimate(runs, 0.3)
    assert wall == pytest.approx(10.0 + 10.0 * 5.0) and peak == pytest.approx(300.0 + 100.0 * 5.0)
    runs[2]["wall_s"] = 11.0
    assert bench().next_point_estimate(runs, 0.3)[0] == pytest.approx(11.0)


def test_a_run_over_its_time_is_stopped_with_every_process_it_started(tmp_path):
    """A timed-out run leaves no child behind (a Snakemake job running on would load the next measurement)."""
    import subprocess
    import sys
    import time

    pid_file = tmp_path / "child.pid"
    script = (
        "import subprocess, sys, time; "
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); "
        f"open({str(pid_file)!r}, 'w').write(str(child.pid)); time.sleep(120)"
    )
    start = time.monotonic()
    why = bench().run_group([sys.executable, "-c", script], tmp_path, timeout=3)
    assert why == "over 3 s" and time.monotonic() - start < 60
    child = int(pid_file.read_text())
    time.sleep(0.5)
    alive = subprocess.run(["ps", "-o", "stat=", "-p", str(child)], capture_output=True, text=True).stdout.strip()
    assert alive in ("", "Z"), alive
    assert bench().run_group([sys.executable, "-c", "import sys; sys.exit(3)"], tmp_path, timeout=30)


def test_the_stages_an_extension_would_settle_are_the_undetermined_rows():
    b, data = bench(), results()
    rate = float(data["host"]["fp32_flops_per_s"])
    for slug, measured in data["measurements"].items():
        expected = [r["stage"] for r in data["stages"] if r["paper"] == slug and r["bound"] == "low end of range"]
        assert b.undetermined_stages(slug, measured, rate) == expected, slug


def test_the_benchmark_reads_every_declared_stage_and_the_resources_it_asks_for(tmp_path):
    """The benchmark's reading of the rule files (paper_stages) against the stages the loaded workflow
    declares at full scale (PAPER_STAGES): every declared stage, also one split into jobs
    (``train_<run>``), has its name there with the resources key it asks for. Without it biodynaspec's,
    hysomi's and nmrshift's training (declared per job) dropped out of the cost table, and mosaic's
    attention_cost (which asks evaluate's GPU) and talda's optimize (train's) were held to the defaults."""
    from test_slurm_harness import copy_tree, loaded_workflow
    from workflow_tools import place_user_data

    tree = copy_tree(tmp_path / "repo")
    place_user_data(tree, "config/full.yaml")
    with loaded_workflow(tree, ["--configfile", "config/full.yaml"]) as (workflow, _):
        declared = {slug: list(stages) for slug, stages in workflow.globals["PAPER_STAGES"].items()}
    assert declared["nmrshift"] and any(st.name.startswith("train_") for st in declared["nmrshift"])
    wrong = []
    for slug, stages in declared.items():
        read = bench().paper_stages(slug)
        for st in stages:
            base = max((b for b in read if st.name == b or st.name.startswith(b + "_")), key=len, default=None)
            if base is None or read[base] != (st.resources or st.name):
                wrong.append(f"{slug} {st.name}: read as {base} asking {read.get(base)}, declared {st.resources}")
    assert not wrong, "\n".join(wrong)
    assert bench().paper_stages("mosaic")["attention_cost"] == "evaluate"


def test_nmrshift_and_biodynaspec_work_count_their_training_loops():
    """NMRShift's largest job trains each fold of its variant for epochs x steps of the labelled batch (where the
    variant uses labels) plus the unlabelled one (where it has an unlabelled fraction); HOSE trains nothing.
    BioDynaSpec's job draws epochs x batches_per_epoch batches of batch_size windows."""
    from repro.papers.biodynaspec import gpu_probe as biodynaspec
    from repro.papers.nmrshift import gpu_probe as nmrshift

    train = {"epochs": 2, "steps_per_epoch": 5, "batch_labelled": 3, "batch_unlabelled": 7}
    variants = {"weak": {"labelled": False, "unlabelled_fraction": 1.0, "folds": [0]}}
    section = {"train": train, "folds": [0, 1, 2], "variants": variants}
    assert nmrshift.work(section) == (2 * 5 * 7, 10)
    variants["supervised"] = {"labelled": True, "unlabelled_fraction": 0.0}
    assert nmrshift.work(section) == (3 * 2 * 5 * 3, 10)
    variants["hose"] = {"labelled": True, "unlabelled_fraction": 1.0, "method": "hose", "folds": [0, 1, 2, 3]}
    assert nmrshift.work(section) == (3 * 2 * 5 * 3, 10)
    assert biodynaspec.work({"epochs": 3, "batches_per_epoch": 4, "batch_size": 5}) == (60, 5)
