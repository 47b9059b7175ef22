"""``python -m repro.reporting.docs`` on a small synthetic checkout: README table, results and budget blocks,
pages without results left alone, missing markers named."""

from __future__ import annotations

import pytest
import yaml

from repro.reporting.claims import ClaimSpec, Interval, Measured, Test, evaluate_claims, write_claims
from repro.reporting.docs import BUDGET_BEGIN, BUDGET_END, RESULTS_BEGIN, RESULTS_END, main, replace_block, update_all
from repro.reporting.scoreboard import gather, to_csv
from repro.workflow.io import InputError, write_text

PAGE = f"""# Alpha

## Budget
{BUDGET_BEGIN}
{BUDGET_END}

## Results
{RESULTS_BEGIN}
{RESULTS_END}
"""
BENCH_HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


@pytest.fixture
def checkout(tmp_path):
    papers = [
        {"slug": "alpha", "short": "Alpha", "title": "Alpha"},
        {"slug": "beta-x", "short": "Beta", "title": "Beta"},
        {"slug": "gamma", "short": "Gamma", "title": "Gamma"},
    ]
    write_text(tmp_path / "resources/papers.yaml", yaml.safe_dump({"papers": papers}))
    for slug in ("alpha", "beta-x"):
        write_text(tmp_path / f"workflow/rules/{slug}.smk", "")
        write_text(tmp_path / f"docs/papers/{slug}.md", PAGE)
    write_text(tmp_path / "README.md", "# Project\n\n<!-- papers-table:begin -->\nold\n<!-- papers-table:end -->\n")
    specs = [
        ClaimSpec("a_effect", "paper", "effect > 1", Test(">", 1.0), lambda m: 2.0),
        ClaimSpec(
            "a_small",
            "paper",
            "small effect > 0",
            Test(">", 0.0),
            lambda m: Measured(0.5, Interval(0.2, 0.8, "percentile bootstrap 95%", 2000)),
        ),
        ClaimSpec("a_missing", "paper", "needs a metric", Test("<", 1.0), lambda m: m["absent"]),
        ClaimSpec("a_identity", "check", "|x| = x for x >= 0", Test("within", 1.0, abs_tol=0.1), lambda m: 1.0),
    ]
    claims = tmp_path / "results/alpha/claims.json"
    write_claims(claims, "alpha", evaluate_claims(specs, {}, "smoke"))
    write_text(tmp_path / "results/scoreboard.csv", to_csv(gather([claims])))
    write_text(
        tmp_path / "results/benchmarks/alpha/data.tsv", BENCH_HEADER + "1.50\t0:00:01\t100.0\t0\t0\t0\t0\t0\t0\t1.00\n"
    )
    write_text(
        tmp_path / "results/benchmarks/alpha/train.tsv", BENCH_HEADER + "2.50\t0:00:02\tNA\t0\t0\t0\t0\t0\t0\t2.00\n"
    )
    return tmp_path


def test_readme_table_has_counts_by_kind_and_the_target_command(checkout):
    update_all(checkout)
    table = (checkout / "README.md").read_text()
    assert (
        "| [Alpha](docs/papers/alpha.md) | 2 pass · 1 fail · 0 inconclusive | 1/1 | `snakemake --cores all alpha` |"
        in table
    )
    assert "| [Beta](docs/papers/beta-x.md) | not run yet |  | `snakemake --cores all beta_x` |" in table
    assert "| Gamma | not built yet |  |  |" in table and "old" not in table


def test_results_block_is_the_claims_table(checkout):
    update_all(checkout)
    page = (checkout / "docs/papers/alpha.md").read_text()
    block = page.split(RESULTS_BEGIN)[1].split(RESULTS_END)[0]
    assert "paper claims 2 pass · 1 fail · 0 inconclusive · checks 1/1 (scale: smoke)" in block
    assert "| id | kind | statement | paper value | ours | interval | test | verdict |" in block
    assert (
        r"| a\_small | paper | small effect > 0 | n/a | 0.5 | \[0.2, 0.8\] (percentile bootstrap 95%, n=2000) |"
        in block
    )
    assert r"| a\_missing | paper | needs a metric | n/a | n/a |  | ours \< 1 | fails |" in block
    assert r"\|x\| = x for x >= 0" in block


def test_budget_block_sums_steps_and_keeps_an_unmeasured_peak_unknown(checkout):
    update_all(checkout)
    page = (checkout / "docs/papers/alpha.md").read_text()
    block = page.split(BUDGET_BEGIN)[1].split(BUDGET_END)[0]
    assert "| data | 1.5 | 1 | 100 |" in block and "| train | 2.5 | 2 | n/a |" in block
    assert "| **total** | 4 | 3 | n/a |" in block


def test_budget_block_takes_cpu_and_peak_from_a_step_log_that_reports_them(checkout):
    # Snakemake's benchmark keeps its last CPU sample (every 30 s after the first 15 s): the log's figure wins.
    write_text(
        checkout / "logs/alpha/train.log",
        "x running repro.papers.alpha.train\nrepro.papers.alpha.train done in 1.2 s (process: 40.5 CPU-s, peak 900 MB)\n",
    )
    update_all(checkout)
    block = (checkout / "docs/papers/alpha.md").read_text().split(BUDGET_BEGIN)[1].split(BUDGET_END)[0]
    assert "| data | 1.5 | 1 | 100 |" in block and "| train | 2.5 | 40.5 | 900 |" in block
    assert "| **total** | 4 | 41.5 | 900 |" in block


def test_budget_block_takes_a_cached_stage_from_its_log_alone(checkout):
    # A stage eligible for the between-workflow cache has no benchmark file (Snakemake refuses both on one rule).
    write_text(
        checkout / "logs/alpha/cached.log",
        "repro.papers.alpha.cached done in 7.0 s (process: 6.5 CPU-s, peak 300 MB)\n",
    )
    update_all(checkout)
    block = (checkout / "docs/papers/alpha.md").read_text().split(BUDGET_BEGIN)[1].split(BUDGET_END)[0]
    assert "| cached | 7 | 6.5 | 300 |" in block and "| **total** | 11 | 9.5 | n/a |" in block


def test_page_without_results_is_left_as_it_is(checkout):
    update_all(checkout)
    assert (checkout / "docs/papers/beta-x.md").read_text() == PAGE


def test_rerun_is_idempotent(checkout, capsys):
    main(["--root", str(checkout)])
    first = (checkout / "docs/papers/alpha.md").read_text(), (checkout / "README.md").read_text()
    main(["--root", str(checkout)])
    assert ((checkout / "docs/papers/alpha.md").read_text(), (checkout / "README.md").read_text()) == first
    assert "docs/papers/alpha.md: results, budget" in capsys.readouterr().out


def test_missing_marker_is_named(checkout):
    page = checkout / "docs/papers/alpha.md"
    page.write_text(PAGE.replace(RESULTS_END, ""))
    with pytest.raises(InputError, match=r"alpha\.md: marker <!-- results:end --> missing"):
        update_all(checkout)


def test_doubled_or_reversed_markers_are_errors():
    with pytest.raises(InputError, match="found 2 times"):
        replace_block("<a> <a> <b>", "<a>", "<b>", "x", "f.md")
    with pytest.raises(InputError, match="comes before"):
        replace_block("<b> <a>", "<a>", "<b>", "x", "f.md")
