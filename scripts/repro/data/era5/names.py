"""WeatherBench2 names: what the canonical store calls things, and the aliases sources use.

ERA5 arrives as WB2/ARCO zarr (long names), CDS NetCDF (short names, ``pressure_level``,
``valid_time``) or GRIB through cfgrib (short names, ``isobaricInhPa``, ``number``); the
canonical store always uses the WB2 spelling so that the same metric code reads every source.
"""

from __future__ import annotations

VARIABLE_ALIASES: dict[str, str] = {
    "z": "geopotential",
    "t": "temperature",
    "u": "u_component_of_wind",
    "v": "v_component_of_wind",
    "q": "specific_humidity",
    "w": "vertical_velocity",
    "t2m": "2m_temperature",
    "2t": "2m_temperature",
    "u10": "10m_u_component_of_wind",
    "10u": "10m_u_component_of_wind",
    "v10": "10m_v_component_of_wind",
    "10v": "10m_v_component_of_wind",
    "msl": "mean_sea_level_pressure",
    "sp": "surface_pressure",
    "lsm": "land_sea_mask",
    "slt": "soil_type",
}

# WB2 variables on pressure levels (a ``level`` dimension); the others are single-level fields.
PRESSURE_LEVEL_VARIABLES = (
    "geopotential",
    "temperature",
    "u_component_of_wind",
    "v_component_of_wind",
    "specific_humidity",
    "vertical_velocity",
)

DIM_ALIASES: dict[str, str] = {
    "isobaricInhPa": "level",
    "pressure_level": "level",
    "plev": "level",
    "lat": "latitude",
    "lon": "longitude",
    "number": "realization",
    "member": "realization",
    "valid_time": "time",
}

SPATIAL_DIMS = ("latitude", "longitude")
CANONICAL_ORDER = ("time", "realization", "level", "latitude", "longitude")
