"""ERA5 in the canonical WeatherBench2 layout (data/era5/).

Two producers end in the same zarr store: ``remote`` (WeatherBench2/ARCO zarr through fsspec,
the Copernicus CDS API, or a user's local zarr/NetCDF/GRIB files) and ``embedded`` (a spherical
shallow-water simulation written in the same layout). Downstream code never knows which ran.
"""
