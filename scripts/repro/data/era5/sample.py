"""Rule entry ``era5_sample``: the shipped real ERA5 ensemble sample (cfgrib's test GRIB) as a canonical zarr.

10 members of the ERA5 ensemble of data assimilations, z and t at 500/850 hPa, 4 times, 3°:
real fields for the metric checks, read by the same GRIB reader and canonicaliser as user data.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from repro.data.era5.canonical import Selection, canonicalise
from repro.data.era5.readers import open_source
from repro.data.era5.writer import write_canonical
from repro.workflow.io import write_json


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(job) -> None:
    grib = Path(job.input.grib)
    ds = canonicalise(open_source(str(grib), "grib"), Selection(["geopotential", "temperature"], [500, 850]), str(grib))
    summary = write_canonical(ds, job.output.store, where=str(grib), source={"file": grib.name}, chunk_time=4)
    write_json(
        job.output.manifest,
        {
            "kind": "shipped",
            "file": grib.name,
            "sha256": sha256(grib),
            "bytes_source": grib.stat().st_size,
            "bytes": summary["bytes"],
            "origin": "cfgrib 0.9.15.1 sdist, tests/sample-data/era5-levels-members.grib",
            "licence": "file: Apache-2.0 (cfgrib); data: ERA5, Copernicus licence",
        },
    )
