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
