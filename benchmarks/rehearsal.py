"""The rehearsal of paper scale: every paper's full-scale path end to end on this machine, timed.

    python benchmarks/rehearsal.py                 # all enabled papers, --cores 2, in a scratch copy
    python benchmarks/rehearsal.py talda pdrf      # some papers
    python benchmarks/rehearsal.py --keep /tmp/r   # keep the copy (results, logs) for a look

Runs ``snakemake --cores N --configfile config/full.yaml config/rehearsal.yaml`` in a fresh copy of the
checkout (the fixtures are written by rules of the same run), then reads every paper's claims.json and
writes ``benchmarks/results/rehearsal.json``: wall seconds, the jobs' CPU seconds from their logs, the
Snakemake process's own CPU, and per paper every claim with its value and verdict and whether it runs
only at paper scale (the docs pages' "Paper scale" block shows those). Exits with status 1 when the run
failed or a full-scale claim is not finite (``n/a`` in a rehearsal is a defect: the claim was not measured).
The goal is at most 15 minutes of wall time on 2 cores for all papers; run it with nothing else on the machine.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "scripts"))

sys.path.insert(0, str(REPO / "benchmarks"))

from default_run import measured_snakemake, top_frames  # noqa: E402
from workflow_tools import commit_copy, copy_workflow  # noqa: E402

from repro.workflow.config import enabled_papers, load_config  # noqa: E402
from repro.workflow.entry import logged_usage  # noqa: E402

OVERLAYS = ("config/full.yaml", "config/rehearsal.yaml")
OUT = REPO / "benchmarks/results/rehearsal.json"


def full_only_claims(slug: str) -> set[str]:
    """Ids of the paper's claims declared for paper scale only."""
    module = importlib.import_module(f"repro.papers.{slug.replace('-', '_')}.claims")
    return {spec.id for spec in module.CLAIMS if tuple(spec.scales) == ("full",)}


def collect(run: Path, papers: list[str]) -> tuple[dict[str, list[dict]], list[str]]:
    """Per paper its claims (id, kind, ours, verdict, full_only), and the full-scale claims without a value."""
    out, missing = {}, []
    for slug in papers:
        path = run / "results" / slug / "claims.json"
        if not path.is_file():
            missing.append(f"{slug}: no claims.json")
            continue
        full_only = full_only_claims(slug)
        claims = json.loads(path.read_text())["claims"]
        out[slug] = [
            {
                "id": c["id"],
                "kind": c["kind"],
                "ours": c["ours"],
                "verdict": c["verdict"],
                "scale": c["scale"],
                "full_only": c["id"] in full_only,
            }
            for c in claims
        ]
        missing += [f"{slug} {c['id']}: n/a" for c in claims if c["ours"] is None]
    return out, missing


def jobs_cpu(run: Path) -> float:
    """CPU seconds the stages' processes report in their logs (0 for a log without the line)."""
    return float(sum((logged_usage(log) or (0.0, 0.0))[0] for log in run.glob("logs/**/*.log")))


def rehearse(work: Path, papers: list[str], cores: int, targets: list[str], profile: Path | None = None) -> dict:
    """Run the rehearsal in a fresh copy at ``work``; its record: wall, the stages' CPU (their logs), the Snakemake
    process's own CPU (default_run.measured_snakemake: its getrusage at exit), and what is neither ("other": the
    jobs' shells, the benchmark files' writers, stages whose log has no usage line)."""
    copy_workflow(work)
    commit_copy(work)
    args = ["--cores", str(cores), *targets, "--configfile", *OVERLAYS]
    rec = measured_snakemake(work, args, profile, timeout=7200, check=False)
    stage_cpu = jobs_cpu(work)
    claims, missing = collect(work, papers)
    return {
        "command": " ".join(["snakemake", *args]),
        "returncode": rec["returncode"],
        "wall_s": rec["wall_s"],
        "cores": cores,
        "load_before": rec["load_before"],
        "run_cpu_s": rec["run_cpu_s"],
        "stage_cpu_s": round(stage_cpu, 1),
        "engine_cpu_s": rec["engine_cpu_s"],
        "other_cpu_s": None
        if rec["engine_cpu_s"] is None
        else round(max(rec["run_cpu_s"] - rec["engine_cpu_s"] - stage_cpu, 0.0), 1),
        "papers": claims,
        "not_measured": missing,
        "stderr_tail": rec["stderr_tail"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("papers", nargs="*", help="papers to rehearse (default: every enabled paper)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it")
    parser.add_argument("--no-write", action="store_true", help=f"do not write {OUT.relative_to(REPO)}")
    parser.add_argument("--profile-engine", type=Path, metavar="FILE", help="py-spy the Snakemake process into FILE")
    args = parser.parse_args(argv)
    papers = args.papers or enabled_papers(load_config(*OVERLAYS))
    targets = [p.replace("-", "_") for p in args.papers]
    if args.keep:
        result = rehearse(args.keep, papers, args.cores, targets, args.profile_engine)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            result = rehearse(Path(tmp) / "wf", papers, args.cores, targets, args.profile_engine)
    engine = result["engine_cpu_s"]
    engine_text = (
        "not measured (the run left no usage file)"
        if engine is None
        else f"{engine:.0f} CPU-s ({100 * engine / max(result['run_cpu_s'], 1e-9):.1f} % of "
        f"{result['run_cpu_s']:.0f}), other {result['other_cpu_s']:.0f} CPU-s"
    )
    print(
        f"rehearsal of {len(papers)} papers: rc {result['returncode']}, {result['wall_s']:.0f} s wall at --cores "
        f"{args.cores}, stages {result['stage_cpu_s']:.0f} CPU-s, engine (the snakemake process) {engine_text}"
    )
    if args.profile_engine:
        for share, frame in top_frames(args.profile_engine, 15):
            print(f"{100 * share:5.1f} %  {frame}")
    for line in result["not_measured"]:
        print("not measured:", line)
    if result["returncode"]:
        print(result["stderr_tail"])
    if not args.no_write:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(json.dumps(result, indent=1) + "\n")
    return 1 if result["returncode"] or result["not_measured"] else 0


if __name__ == "__main__":
    sys.exit(main())
