"""Two fresh runs of the embedded default at different ``--cores`` give the same claims (DESIGN.md, "Scales").

    python benchmarks/identical_reruns.py talda pdrf          # given papers
    python benchmarks/identical_reruns.py --all               # every enabled paper

Each run happens in its own fresh copy of the checkout (no results, data or logs carried over), the first
with ``--cores 1`` and the second with ``--cores 2``. For every claim not marked ``timing``, ``ours``, the
interval and the verdict must be identical; the script prints each difference (paper, claim, both values)
and exits with status 1 when there is one. tests/test_reruns_identical.py checks a few papers in CI, taking the
``--cores 2`` side from the tests' shared run of the embedded default.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from workflow_tools import copy_workflow, snakemake  # noqa: E402


def claims_of(run: Path, papers: list[str]) -> dict[tuple[str, str], dict]:
    out = {}
    for slug in papers:
        doc = json.loads((run / "results" / slug / "claims.json").read_text())
        for claim in doc["claims"]:
            out[(slug, claim["id"])] = claim
    return out


def differences(first: dict, second: dict) -> list[str]:
    """Lines naming each non-timing claim whose value, interval or verdict differs between the runs."""
    lines = []
    for key in sorted(set(first) | set(second)):
        a, b = first.get(key), second.get(key)
        if a is None or b is None:
            lines.append(f"{key[0]} {key[1]}: only in the {'second' if a is None else 'first'} run")
            continue
        if a.get("timing") or b.get("timing"):
            continue
        for field in ("ours", "interval", "verdict"):
            if a.get(field) != b.get(field):
                lines.append(f"{key[0]} {key[1]}: {field} {a.get(field)!r} (--cores 1) != {b.get(field)!r} (--cores 2)")
    return lines


def fresh_run(papers: list[str], work: Path, cores: int) -> dict[tuple[str, str], dict]:
    """Claims of ``papers`` after one run with ``cores`` in a fresh copy of the checkout at ``work``."""
    copy_workflow(work)
    start = time.perf_counter()
    snakemake(work, "--cores", str(cores), *[p.replace("-", "_") for p in papers], timeout=7200)
    print(f"--cores {cores}: {time.perf_counter() - start:.0f} s", flush=True)
    return claims_of(work, papers)


def run_twice(papers: list[str], root: Path) -> list[str]:
    return differences(*(fresh_run(papers, root / f"cores{cores}", cores) for cores in (1, 2)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("papers", nargs="*")
    parser.add_argument("--all", action="store_true", help="every enabled paper")
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it (default: a temporary one)")
    args = parser.parse_args(argv)
    papers = args.papers
    if args.all:
        from repro.workflow.config import enabled_papers, load_config

        papers = enabled_papers(load_config())
    if not papers:
        parser.error("name papers or pass --all")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        diffs = run_twice(papers, args.keep)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            diffs = run_twice(papers, Path(tmp))
    for line in diffs:
        print(line)
    print(f"{len(diffs)} differences over {len(papers)} papers")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
