"""ERA5 in the canonical WeatherBench2 layout (data/era5/), and the shipped real ERA5 ensemble sample."""

ERA5 = config["data"]["era5"]
ERA5_STORE = "data/era5/era5.zarr"
ERA5_SAMPLE = "data/era5/sample.zarr"
ERA5_OUT = {
    "store": directory(ERA5_STORE),
    "norm_stats": "data/era5/norm_stats.npz",
    "manifest": "data/era5/manifest.json",
}
# Two chunk threads by default (I/O and numcodecs overlap); `resources: {data: {...}}` in the section replaces it.
ERA5_THREADS, ERA5_RESOURCES = stage_resources(
    {"resources": {"data": {"threads": 2}}} | ERA5, "data"
)


rule era5_data:
    input:
        user_files=user_inputs(
            ERA5 if ERA5["source"] == "local" else {},
            ("data", "era5"),
            "docs/papers/mosaic.md, section 'Paper scale'",
        ),
        stores=repo_file("resources/era5/stores.yaml"),
        code=code_closure("repro.data.era5.acquire"),
    output:
        **ERA5_OUT,
    log:
        "logs/data/era5.log",
    benchmark:
        f"{BENCHMARKS}/data/era5_data.tsv"
    localrule: True
    conda:
        "../../envs/weather.yaml"
    threads: ERA5_THREADS
    resources:
        **ERA5_RESOURCES,
    params:
        entry="repro.data.era5.acquire",
        section=ERA5,
    script:
        ENTRY


rule era5_sample:
    input:
        grib=repo_file("resources/era5/era5-levels-members.grib"),
        code=code_closure("repro.data.era5.sample"),
    output:
        store=directory(ERA5_SAMPLE),
        manifest="data/era5/sample_manifest.json",
    log:
        "logs/data/era5_sample.log",
    benchmark:
        f"{BENCHMARKS}/data/era5_sample.tsv"
    localrule: True
    conda:
        "../../envs/weather.yaml"
    params:
        entry="repro.data.era5.sample",
    script:
        ENTRY
