"""Stage: convergence curves (F1), empirical rate against coupling (F2), TALDA's surrogate W (F3)."""

from __future__ import annotations

import numpy as np
import xarray as xr

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

LABELS = {"gda": "GDA", "agda": "AGDA", "eg": "EG", "ogda": "OGDA", "talda": "TALDA"}


def panels(ds: xr.Dataset) -> list[tuple[str, int]]:
    """(title, instance) of the weakest and strongest coupled quadratic game, robust LS and the Yang example."""
    quad = np.flatnonzero(ds.family.values == "quadratic")
    couplings = ds.coupling.values[quad]
    picks = [
        (f"quadratic, L_xy = {couplings.min():g}", quad[np.argmin(couplings)]),
        (f"quadratic, L_xy = {couplings.max():g}", quad[np.argmax(couplings)]),
    ]
    for family, title in (("robust_ls", "robust least squares"), ("yang", "Yang et al. example")):
        idx = np.flatnonzero(ds.family.values == family)
        if idx.size:
            picks.append((title, idx[0]))
    return picks


def convergence_figure(ds: xr.Dataset, path: str) -> None:
    chosen = panels(ds)
    fig, axes = subplots(2, len(chosen), width=3.2, height=3.0, layout="constrained")
    for row, steps in enumerate(("theory", "tuned")):
        for col, (title, i) in enumerate(chosen):
            ax = axes[row][col]
            for algorithm in ds.algorithm.values:
                run = ds.sel(algorithm=algorithm, steps=steps).isel(instance=i)
                ax.semilogy(run.calls.values, run.error.values, label=LABELS[str(algorithm)])
            ax.set(title=f"{title}, {steps} steps", xlabel="oracle calls (gradients + HVPs)")
        axes[row][0].set_ylabel("squared distance to saddle ||z - z*||^2")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
    save(fig, path)


def rate_figure(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 2, width=3.6)
    for ax, steps in zip(axes[0], ("theory", "tuned")):
        for algorithm, slopes in metrics["median_slope_per_call_vs_coupling"][steps].items():
            ax.loglog(metrics["couplings"], [max(-s, 1e-8) for s in slopes], "o-", ms=3, label=LABELS[algorithm])
        ax.set(title=f"{steps} step sizes", xlabel="coupling L_xy = ||B||_2 (problem units)")
        ax.set_ylabel("convergence exponent per oracle call\n(-slope of log error, median over seeds)")
    axes[0][1].legend(title="method")
    save(fig, path)


def lyapunov_figure(ds: xr.Dataset, path: str) -> None:
    fig, axes = subplots(1, 1, width=4.0)
    ax = axes[0][0]
    for title, i in panels(ds):
        w = ds.lyapunov.sel(steps="theory").isel(instance=i).values
        ax.semilogy(w / w[0], label=title)
    ax.set(
        xlabel="iteration",
        ylabel="surrogate W / W(z0) (dimensionless)",
        title="TALDA surrogate Lyapunov value (theory steps)",
    )
    ax.legend(title="problem")
    save(fig, path)


def main(job) -> None:
    ds = xr.open_zarr(job.input.runs).load()
    convergence_figure(ds, job.output.convergence)
    rate_figure(read_json(job.input.metrics), job.output.rates)
    lyapunov_figure(ds, job.output.lyapunov)
