"""WeatherBench2 metric definitions (weatherbench2/metrics.py, derived_variables.py), in numpy.

Arrays are (..., latitude, longitude) with latitude ascending; ensembles carry a member axis.
"""

from __future__ import annotations

import numpy as np

EARTH_RADIUS_M = 6.371e6


def latitude_weights(latitude: np.ndarray) -> np.ndarray:
    """Cell-area weights: sin(upper) - sin(lower) with bounds at mid-points (and +-90 at the ends), mean 1.

    Unlike cos(latitude), this gives the pole rows of an equiangular grid with poles half a cell.
    """
    lat = np.deg2rad(np.asarray(latitude, float))
    mids = (lat[1:] + lat[:-1]) / 2
    bounds = np.concatenate([[-np.pi / 2], mids, [np.pi / 2]])
    if lat[0] > lat[-1]:
        bounds = np.concatenate([[np.pi / 2], mids, [-np.pi / 2]])
    weights = np.abs(np.sin(bounds[1:]) - np.sin(bounds[:-1]))
    return weights / weights.mean()


def spatial_mean(field: np.ndarray, latitude: np.ndarray) -> np.ndarray:
    """Area-weighted mean over the last two axes (latitude, longitude)."""
    w = latitude_weights(latitude)[:, None]
    return (np.asarray(field) * w).mean(axis=(-2, -1))


def rmse(forecast: np.ndarray, truth: np.ndarray, latitude: np.ndarray, time_axis: int = 0) -> np.ndarray:
    """sqrt(mean over time of the weighted spatial mean of squared error): square root after averaging."""
    return np.sqrt(spatial_mean((forecast - truth) ** 2, latitude).mean(axis=time_axis))


def crps_fair(ensemble: np.ndarray, truth: np.ndarray, member_axis: int = 1) -> np.ndarray:
    """Pointwise fair CRPS with the rank form of the spread term (Zamo & Naveau 2018); M = 1 gives MAE."""
    ens = np.moveaxis(np.asarray(ensemble, float), member_axis, 0)
    m = ens.shape[0]
    skill = np.abs(ens - truth).mean(axis=0)
    if m == 1:
        return skill
    ranks = np.arange(1, m + 1).reshape((m,) + (1,) * (ens.ndim - 1))
    spread = ((2 * ranks - m - 1) * np.sort(ens, axis=0)).sum(axis=0) / (m * (m - 1))
    return skill - spread


def crps_fair_pairwise(ensemble: np.ndarray, truth: np.ndarray, member_axis: int = 1) -> np.ndarray:
    """The definition: (1/M) sum |x_m - y| - 1/(2M(M-1)) sum_{m != m'} |x_m - x_m'| (O(M^2), for checks)."""
    ens = np.moveaxis(np.asarray(ensemble, float), member_axis, 0)
    m = ens.shape[0]
    pairs = np.abs(ens[:, None] - ens[None, :]).sum(axis=(0, 1))
    return np.abs(ens - truth).mean(axis=0) - pairs / (2 * m * (m - 1))


def spread_skill(ensemble: np.ndarray, truth: np.ndarray, latitude: np.ndarray, member_axis: int = 1) -> np.ndarray:
    """sqrt(time mean of weighted mean of the unbiased ensemble variance) / RMSE of the ensemble mean."""
    variance = np.var(ensemble, axis=member_axis, ddof=1)
    spread = np.sqrt(spatial_mean(variance, latitude).mean(axis=0))
    return spread / rmse(np.mean(ensemble, axis=member_axis), truth, latitude)


def zonal_spectrum(field: np.ndarray, latitude: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Zonal energy spectrum per latitude circle: S[k] = 2 C |F[k]|^2 (k > 0), C |F[0]|^2, Nyquist once.

    F[k] = (1/L) sum_l f_l exp(-2 pi i k l / L), C = 2 pi R cos(latitude). Returns (spectrum (..., lat, k), k).
    """
    field = np.asarray(field, float)
    n_lon = field.shape[-1]
    coeffs = np.fft.rfft(field, axis=-1) / n_lon
    factor = np.full(coeffs.shape[-1], 2.0)
    factor[0] = 1.0
    if n_lon % 2 == 0:
        factor[-1] = 1.0
    circumference = 2 * np.pi * EARTH_RADIUS_M * np.cos(np.deg2rad(latitude))
    return factor * np.abs(coeffs) ** 2 * circumference[:, None], np.arange(coeffs.shape[-1])


def band_spectrum(field: np.ndarray, latitude: np.ndarray, band: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Zonal spectrum averaged over the latitudes with band[0] <= |lat| <= band[1] (both hemispheres).

    Returns (spectrum (..., k), wavelength_km (k >= 1; inf at k = 0)) with the wavelength at the band's mean latitude.
    """
    latitude = np.asarray(latitude, float)
    rows = (np.abs(latitude) >= band[0]) & (np.abs(latitude) <= band[1])
    spectrum, k = zonal_spectrum(np.take(field, np.flatnonzero(rows), axis=-2), latitude[rows])
    mean_circ = 2 * np.pi * EARTH_RADIUS_M * np.cos(np.deg2rad(np.abs(latitude[rows]))).mean() / 1000
    with np.errstate(divide="ignore"):
        wavelength = mean_circ / k
    return spectrum.mean(axis=-2), wavelength
