"""Rule entry ``pai_graphon_figures``: (F1) graphon heatmaps per criterion and width, (F2) distance between
consecutive widths, (F3) per-input keep fraction (synthetic coordinates; digits as an 8x8 image),
(F4) NTK alignment and test accuracy against density."""

from __future__ import annotations

import numpy as np
import xarray as xr
from matplotlib.ticker import NullLocator

from repro.reporting import plotting
from repro.workflow.io import read_json


def heatmaps(ds: xr.Dataset, path: str) -> None:
    """Degree-sorted mask graphons per criterion and width, and in the last column the FSM's predicted limit
    graphon at the largest width."""
    g = ds["sorted_graphon"].sel(dataset="synthetic")
    predicted = ds["fsm_graphon"].sel(dataset="synthetic")
    crit, widths = list(g.criterion.values), list(g.width.values)
    fig, axes = plotting.subplots(len(crit), len(widths) + 1, width=1.7, height=1.7, layout="constrained")
    vmax = float(np.maximum(g.max(), predicted.max()))
    for i, c in enumerate(crit):
        panels = [(f"width {w}", g.sel(criterion=c, width=w).values) for w in widths]
        panels.append((f"FSM, width {widths[-1]}", predicted.sel(criterion=c, width=widths[-1]).values))
        for j, (title, image) in enumerate(panels):
            ax = axes[i, j]
            im = ax.imshow(image, vmin=0, vmax=vmax, cmap="viridis", origin="upper")
            ax.set_xticks([]), ax.set_yticks([]), ax.grid(False)
            if i == 0:
                ax.set_title(title)
            if j == 0:
                ax.set_ylabel(c)
    fig.colorbar(im, ax=axes, shrink=0.6, label="keep probability")
    plotting.save(fig, path)


def distances(metrics: dict, s: dict, path: str) -> None:
    """L2 distance of the degree-sorted mask graphon to the FSM prediction (solid) and to the constant graphon p
    (dotted), mean over seeds, against width."""
    fig, axes = plotting.subplots(1, 2, width=3.6, height=2.7, layout="constrained")
    for ax, name in zip(axes[0], ("synthetic", "digits")):
        for k, c in enumerate(s["criteria"]):
            fsm = metrics[name][c]["fsm"]
            color = plotting.PALETTE[k]
            ax.loglog(fsm["widths"], np.mean(fsm["distance"], axis=1), "o-", color=color, ms=3, label=f"{c}: FSM")
            ax.loglog(fsm["widths"], np.mean(fsm["constant_distance"], axis=1), ":", color=color, lw=1)
        ref = np.array(fsm["widths"], float)
        ax.loglog(ref, np.mean(fsm["distance"][0]) * (ref / ref[0]) ** -0.5, "k--", lw=0.8, label=r"$n^{-1/2}$")
        ax.set_xticks(fsm["widths"], [str(w) for w in fsm["widths"]])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_title(name)
        ax.set_xlabel("width n")
        ax.set_ylabel(r"$\|W_n - W_{\mathrm{FSM}}\|_2$ (dotted: to p)")
        ax.legend(fontsize=6)
    plotting.save(fig, path)


def profiles(ds: xr.Dataset, path: str) -> None:
    crit = list(ds.criterion.values)
    top = int(ds.width.max())
    fig, axes = plotting.subplots(1, 1 + len(crit), width=2.6, height=2.5, layout="constrained")
    syn = ds["profile"].sel(dataset="synthetic", width=top)
    for c in crit:
        axes[0, 0].plot(syn.input.values, syn.sel(criterion=c).values, ".-", ms=3, lw=0.8, label=c)
    for i in ds.attrs["informative_idx"]:
        axes[0, 0].axvspan(i - 0.5, i + 0.5, color="0.85", zorder=0)
    axes[0, 0].axhline(ds.attrs["density"], color="k", ls=":", lw=1)
    axes[0, 0].set_xlabel("input coordinate (grey: informative)")
    axes[0, 0].set_ylabel(f"kept fraction (width {top})")
    axes[0, 0].legend(fontsize=6)
    dig = ds["profile"].sel(dataset="digits", width=top)
    for ax, c in zip(axes[0, 1:], crit):
        im = ax.imshow(dig.sel(criterion=c).values.reshape(8, 8), vmin=0, vmax=float(dig.max()), cmap="magma")
        ax.set_title(f"digits: {c}")
        ax.set_xticks([]), ax.set_yticks([]), ax.grid(False)
    fig.colorbar(im, ax=axes[0, 1:], shrink=0.7, label="kept fraction per pixel")
    plotting.save(fig, path)


def alignment(metrics: dict, s: dict, path: str) -> None:
    records = metrics["train"]["records"]
    fig, axes = plotting.subplots(1, 2, width=3.4, height=2.6, layout="constrained")
    for key, ax in zip(("alignment", "test_accuracy"), axes[0]):
        for c in s["criteria"]:
            dens = sorted({r["density"] for r in records if r["criterion"] == c})
            vals = [[r[key] for r in records if r["criterion"] == c and r["density"] == d] for d in dens]
            ax.errorbar(dens, [np.mean(v) for v in vals], yerr=[np.std(v) for v in vals], fmt="o-", ms=3, label=c)
        dense = [r[key] for r in records if r["criterion"] == "dense"]
        ax.axhline(np.mean(dense), color="k", ls=":", lw=1, label="dense")
        ax.set_xscale("log")
        ax.set_xticks(s["ntk"]["densities"], [f"{d:g}" for d in s["ntk"]["densities"]])
        ax.minorticks_off()
        ax.set_xlabel("density")
        ax.set_ylabel("NTK-target alignment" if key == "alignment" else "test accuracy")
    axes[0, 0].legend(fontsize=6)
    plotting.save(fig, path)


def main(job) -> None:
    s = job.params.settings
    metrics = read_json(job.input.metrics)
    ds = xr.open_zarr(job.input.graphons).load()
    heatmaps(ds, job.output.graphons)
    distances(metrics, s, job.output.convergence)
    profiles(ds, job.output.degree_profiles)
    alignment(metrics, s, job.output.alignment)
