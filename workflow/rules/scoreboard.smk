"""Rules shared by every paper: provenance of each results folder and the scoreboard of all claims.

In the report each paper is one category (its slug) holding its claims table, its figures and its
provenance; the landing page (results/scoreboard.rst) links to those categories.
"""

from repro.reporting.registry import load_papers
from repro.reporting.scoreboard import built_papers, headline_figures


rule provenance:
    input:
        claims="results/{paper}/claims.json",
        manifests=lambda wc: data_manifests(wc.paper),
    output:
        report(
            "results/{paper}/provenance.json",
            category="{paper}",
            subcategory="provenance",
            caption="../report/provenance.rst",
        ),
    log:
        "logs/{paper}/provenance.log",
    benchmark:
        f"{BENCHMARKS}/{{paper}}/provenance.tsv"
    # Tiny jobs (read a few JSON files): a cluster submission would cost more than the work.
    localrule: True
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.workflow.provenance",
        section=lambda wc: {
            k: v for k, v in paper_config(wc.paper).items() if k != "resources"
        },
        seed=lambda wc: paper_seed(wc.paper),
        scale=config["scale"],
    script:
        ENTRY


rule scoreboard:
    input:
        claims=expand("results/{paper}/claims.json", paper=PAPERS),
        figures=lambda wc: list(headline_figures(PAPERS, rules).values()),
        papers=repo_file("resources/papers.yaml"),
        code=code_closure("repro.reporting.scoreboard"),
    output:
        **{
            f"claims_{rule_name(slug)}": report(
                f"results/{slug}/claims.html",
                category=slug,
                subcategory="claims",
                caption="../report/claims.rst",
            )
            for slug in PAPERS
        },
        csv=report(
            "results/scoreboard.csv",
            category="Scoreboard",
            caption="../report/scoreboard.rst",
        ),
        papers_csv=report(
            "results/scoreboard_papers.csv",
            category="Scoreboard",
            caption="../report/scoreboard.rst",
        ),
        md="results/scoreboard.md",
        rst="results/scoreboard.rst",
    log:
        "logs/scoreboard.log",
    benchmark:
        f"{BENCHMARKS}/scoreboard.tsv"
    localrule: True
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.reporting.scoreboard",
        papers=PAPERS,
        built=built_papers(REPO, load_papers()),
        tables={slug: f"results/{slug}/claims.html" for slug in PAPERS},
        headline=lambda wc: headline_figures(PAPERS, rules),
    script:
        ENTRY


rule site:
    input:
        scoreboard="results/scoreboard.csv",
        provenance=expand("results/{paper}/provenance.json", paper=PAPERS),
        figures=lambda wc: [png for p in PAPERS for png, _ in paper_figures(p)],
        captions=lambda wc: [rst for p in PAPERS for _, rst in paper_figures(p)],
        papers=repo_file("resources/papers.yaml"),
        code=code_closure("repro.reporting.site"),
    output:
        index="results/index.html",
        pages=expand("results/site/{paper}.html", paper=PAPERS),
    log:
        "logs/site.log",
    benchmark:
        f"{BENCHMARKS}/site.tsv"
    localrule: True
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.reporting.site",
        papers=PAPERS,
        report="report.html",
        pages={slug: f"results/site/{slug}.html" for slug in PAPERS},
        figures=lambda wc: {slug: paper_figures(slug) for slug in PAPERS},
    script:
        ENTRY


# Not part of `all`: needs Debian's chromium (headless). Run after the workflow; a reviewer looks at the
# PNGs, tests/test_report_browser.py asserts on geometry.json.
rule report_screenshots:
    input:
        index="results/index.html",
        page=f"results/site/{PAPERS[0]}.html",
        code=code_closure("repro.reporting.screenshots"),
    output:
        folder=directory("results/report-screenshots"),
    log:
        "logs/report_screenshots.log",
    benchmark:
        f"{BENCHMARKS}/report_screenshots.tsv"
    localrule: True
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.reporting.screenshots",
    script:
        ENTRY
