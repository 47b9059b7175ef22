"""The rehearsal's inputs: small file sets in the published layouts of the paper-scale datasets.

Each writer module ``repro.fixtures.<name>`` gets a rule ``fixture_<name>`` that fills
``data/fixtures/<name>/`` (core env: numpy, h5py, zarr, scipy and pandas; a writer that needs more names its env in a line ``ENV = "<env>"``). ``config/rehearsal.yaml`` points the readers' user-path keys into these
folders; a user path inside one is an input satisfied by the folder (``user_input`` in common.smk), so
the rehearsal needs no step beyond the one ``snakemake`` command. A writer whose files a paper reads up to
a count of its config gets that count (``sizes``), so the files always hold what the run reads.
"""

from repro.fixtures import sizes_for

FIXTURES = sorted(
    p.stem
    for p in (REPO / "scripts/repro/fixtures").glob("*.py")
    if p.stem not in ("__init__", "stage")
)


def fixture_env(name):
    """The env a writer declares with a top-level ``ENV = "<env>"`` line (read as text, nothing imported:
    e.g. the ATLAS writer needs mdtraj to write XTC files); core otherwise."""
    text = (REPO / f"scripts/repro/fixtures/{name}.py").read_text()
    found = re.search(r"^ENV = \"(\w+)\"$", text, re.MULTILINE)
    return found.group(1) if found else "core"


FIXTURE_DIRS.extend(f"data/fixtures/{name}" for name in FIXTURES)


for _name in FIXTURES:

    rule:
        name:
            f"fixture_{_name}"
        input:
            code=code_closure(f"repro.fixtures.{_name}"),
        output:
            root=directory(f"data/fixtures/{_name}"),
        log:
            f"logs/fixtures/{_name}.log",
        benchmark:
            f"{BENCHMARKS}/fixtures/{_name}.tsv"
        localrule: True
        conda:
            env_file(fixture_env(_name))
        params:
            entry="repro.fixtures.stage",
            fixture=_name,
            # the writer's sizes for this run's config (repro.fixtures.sizes_for), read only where the
            # fixture is needed; the fixture holds what the config reads, and grows with it
            sizes=lambda wildcards, name=_name: sizes_for(name, config),
        script:
            ENTRY
