"""Rule entry ``era5_data``: produce data/era5/{era5.zarr, norm_stats.npz, manifest.json} from the configured source.

Sources: ``embedded`` (shallow-water simulation), ``remote`` (WeatherBench2 or ARCO-ERA5 zarr over
fsspec/gcsfs, anonymous; any fsspec URL, so ``file://`` stores go through the same code), ``cds``
(Copernicus CDS API with the user's own key file, downloaded to NetCDF, then read like a local file)
and ``local`` (the user's zarr/NetCDF/GRIB files).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from pathlib import Path
from typing import Any

import xarray as xr
import yaml

from repro.data.era5.canonical import Selection, canonicalise_indexed, channel_names
from repro.data.era5.readers import guess_format, local_zarr_root, open_source
from repro.data.era5.shallow_water import ShallowWaterSettings, simulate
from repro.data.era5.writer import chunk_readers, store_bytes, write_canonical
from repro.workflow.io import InputError, write_json
from repro.workflow.manifest import file_record

log = logging.getLogger(__name__)
STORES_FILE = Path(__file__).resolve().parents[4] / "resources" / "era5" / "stores.yaml"


def remote_url(section: dict[str, Any]) -> str:
    """The store URL: an explicit ``url``, or the known WB2/ARCO store for ``store`` and ``resolution``."""
    remote = section["remote"]
    if remote.get("url"):
        return remote["url"]
    stores = yaml.safe_load(STORES_FILE.read_text())
    try:
        return stores[remote["store"]][remote["resolution"]]
    except KeyError as err:
        raise InputError(STORES_FILE, f"no {remote['store']} store at resolution {remote['resolution']!r}") from err


def selection(section: dict[str, Any]) -> Selection:
    time = section.get("time", {})
    return Selection(
        variables=section["variables"],
        levels=section.get("levels", []),
        start=time.get("start"),
        end=time.get("end"),
        step_hours=time.get("step_hours"),
    )


def cds_download(section: dict[str, Any], target: Path) -> Path:
    """Retrieve pressure-level ERA5 from the CDS API as NetCDF (key from the user's own ~/.cdsapirc or key_file)."""
    import cdsapi

    cds = section["cds"]
    if cds.get("key_file"):
        key_file = Path(os.path.expanduser(cds["key_file"]))
        if not key_file.exists():
            raise InputError(key_file, "CDS API key file does not exist")
        os.environ["CDSAPI_RC"] = str(key_file)
    time = section["time"]
    dates = xr.date_range(time["start"], time["end"], freq="D")
    request = {
        "product_type": ["reanalysis"],
        "variable": list(section["variables"]),
        "pressure_level": [str(int(lev)) for lev in section.get("levels", [])],
        "date": f"{dates[0]:%Y-%m-%d}/{dates[-1]:%Y-%m-%d}",
        "time": [f"{h:02d}:00" for h in range(0, 24, time.get("step_hours", 6))],
        "grid": [cds.get("grid_degrees", 1.5)] * 2,
        "data_format": "netcdf",
    }
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    cdsapi.Client().retrieve(cds.get("dataset", "reanalysis-era5-pressure-levels"), request, str(partial))
    os.replace(partial, target)
    return target


def open_configured(section: dict[str, Any], work_dir: Path) -> tuple[xr.Dataset, dict[str, Any]]:
    """Open the configured source lazily; return it with the manifest's description of the source."""
    source = section["source"]
    if source == "embedded":
        emb = section["embedded"]
        settings = ShallowWaterSettings(nlat=emb["nlat"], spinup_days=emb["spinup_days"])
        n_steps = int(emb["days"] * 24 / emb["step_hours"])
        ds = simulate(settings, emb["seed"], n_steps, emb["step_hours"], emb["start"])
        return ds, {"kind": "embedded", "generator": ds.attrs["source"], "seed": emb["seed"], "licence": "generated"}
    if source == "remote":
        url = remote_url(section)
        storage = section["remote"].get("storage_options", {})
        ds = open_source(url, "zarr", storage, lazy=True)
        return ds, {"kind": "remote", "url": url, "licence": "ERA5: Copernicus licence"}
    if source == "cds":
        path = work_dir / "cds_download.nc"
        if not path.exists():
            cds_download(section, path)
        return open_source(str(path), "netcdf", lazy=True), {
            "kind": "cds",
            "url": "https://cds.climate.copernicus.eu",
            "licence": "ERA5: Copernicus licence",
        }
    local = section["local"]
    return open_source(local["path"], local.get("format"), lazy=True), {
        "kind": "local",
        "url": local["path"],
        "licence": local.get("licence", "unknown"),
    }


def source_readers(section: dict[str, Any], url: str | None, plan) -> dict | None:
    """Chunk-file readers when the source is a local zarr store (file:// or a path), else None (xarray reads)."""
    if url is None or section["source"] not in ("remote", "local"):
        return None
    fmt = section.get("local", {}).get("format") if section["source"] == "local" else "zarr"
    root = local_zarr_root(url)
    if root is None or (fmt or guess_format(url)) != "zarr":
        return None
    return chunk_readers(root, plan)


def convert(section: dict[str, Any], store: Path, norm_stats: Path, manifest: Path, workers: int = 4) -> dict[str, Any]:
    """Open, canonicalise, write resumably, then write the manifest last (its presence means complete)."""
    raw, described = open_configured(section, store.parent)
    where = described.get("url", described["kind"])
    ds, plan = canonicalise_indexed(raw, selection(section), where)
    summary = write_canonical(
        ds,
        store,
        where=where,
        source=described,
        chunk_time=section.get("chunk_time", 1),
        workers=workers,
        norm_stats_path=norm_stats,
        readers=source_readers(section, described.get("url"), plan),
        max_missing_fraction=section.get("max_missing_fraction", 0.0),
    )
    times = ds["time"].values
    record = described | {
        "variables": list(section["variables"]),
        "levels": [float(x) for x in ds["level"].values] if "level" in ds.coords else [],
        "channels": channel_names(ds),
        "time_range": [str(times[0]), str(times[-1])],
        "n_times": int(len(times)),
        "grid": {"n_latitude": ds.sizes["latitude"], "n_longitude": ds.sizes["longitude"]},
        "bytes": summary["bytes"],
        "norm_stats_bytes": store_bytes(norm_stats),
        "resumed_chunks": summary["resumed_chunks"],
        "missing": summary["missing"],
        "inputs": [file_record(section["local"]["path"], role="input")] if section["source"] == "local" else [],
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    write_json(manifest, record)
    return record


def main(job) -> None:
    section = job.params.section
    record = convert(
        section,
        Path(job.output.store),
        Path(job.output.norm_stats),
        Path(job.output.manifest),
        workers=max(2, job.threads),
    )
    log.info("wrote %s: %d times, %d bytes", job.output.store, record["n_times"], record["bytes"])
