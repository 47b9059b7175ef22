"""Names of the forecast variables in ``forecasts.zarr``, shared by evaluation and figures."""

from __future__ import annotations


def method_name(key: str) -> str:
    """Forecast key -> method name: the first seed's forecasts carry the variant's bare name."""
    return key.replace("_s0_", "_").removesuffix("_s0")
