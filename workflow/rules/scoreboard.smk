"""Rules shared by every paper: provenance of each results folder and the scoreboard of all claims."""


rule provenance:
    input:
        claims="results/{paper}/claims.json",
        manifests=lambda wc: data_manifests(wc.paper),
    output:
        report(
            "results/{paper}/provenance.json",
            category="Provenance",
            subcategory="{paper}",
            caption="../report/provenance.rst",
        ),
    log:
        "logs/{paper}/provenance.log",
    # Tiny jobs (read a few JSON files): a cluster submission would cost more than the work.
    localrule: True
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.provenance",
        section=lambda wc: paper_config(wc.paper),
        seed=lambda wc: paper_seed(wc.paper),
        scale=config["scale"],
    script:
        ENTRY


rule scoreboard:
    input:
        claims=expand("results/{paper}/claims.json", paper=PAPERS),
        papers=repo_file("resources/papers.yaml"),
    output:
        csv=report(
            "results/scoreboard.csv",
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
        entry="repro.scoreboard",
    script:
        ENTRY
