"""Stage: descriptor blocks, ESOL descriptors, Morgan fingerprints and scaffolds of every row, timed.

Outputs ``features.parquet`` (one row per table row, columns ``<block>:<name>``), ``morgan.npz``
(packed bits) and ``timing.json`` (featurising seconds per 1,000 molecules, the runtime claim's input).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from repro.papers.dissolvr.features import featurise, morgan_bits
from repro.workflow.io import InputError, atomic_path, write_json
from repro.workflow.progress import Progress


def main(job) -> None:
    table = pd.read_parquet(job.input.table)
    if table.empty:
        raise InputError(job.input.table, "the solubility table has no rows")
    settings = job.params.settings["rf"]
    progress = Progress("dissolvr featurise", total=len(table), unit="rows")
    start = time.perf_counter()
    features = featurise(table)
    descriptor_seconds = time.perf_counter() - start
    progress.update(len(table), force=True)
    start = time.perf_counter()
    bits = morgan_bits(list(table["solute_smiles"]), settings["radius"], settings["bits"])
    morgan_seconds = time.perf_counter() - start
    with atomic_path(job.output.features) as tmp:
        features.to_parquet(tmp, index=False)
    with atomic_path(job.output.morgan) as tmp:
        np.savez_compressed(tmp, bits=np.packbits(bits, axis=1), n_bits=settings["bits"])
    molecules = table["solute_smiles"].nunique() + table["solvent_smiles"].nunique()
    write_json(
        job.output.timing,
        {
            "molecules": int(molecules),
            "descriptor_seconds_per_1000": 1000 * descriptor_seconds / molecules,
            "morgan_seconds_per_1000": 1000 * morgan_seconds / len(table),
        },
    )
