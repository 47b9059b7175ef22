"""One plotting style for every paper's figures, and an atomic figure writer.

``save`` also records, in the PNG's text metadata (key ``repro-axes``), what each panel shows: its axis
labels, title, how many labelled series it draws and whether it has a legend, and whether it is an image
panel (imshow with its axes hidden). tests/test_report_browser.py reads it back to check that every figure
a reader sees labels its axes and tells its series apart (issue: figures a reader understands).
"""

from __future__ import annotations

import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from repro.workflow.io import atomic_path  # noqa: E402

STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 130,
    "savefig.bbox": "tight",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.5,
}
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]


def subplots(nrows: int = 1, ncols: int = 1, *, width: float = 3.2, height: float = 2.6, **kwargs):
    """``plt.subplots`` in the project style, sized per panel."""
    plt.rcParams.update(STYLE)
    plt.rcParams["axes.prop_cycle"] = matplotlib.cycler(color=PALETTE)
    return plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False, **kwargs)


def axes_audit(fig) -> list[dict]:
    """Per visible panel: labels, title, number of labelled series, legend, image panel (see module doc)."""
    panels = []
    for ax in fig.get_axes():
        if not ax.get_visible() or ax.get_label() == "<colorbar>":
            continue
        handles, _ = ax.get_legend_handles_labels()
        panels.append(
            {
                "xlabel": ax.get_xlabel(),
                "ylabel": ax.get_ylabel(),
                "title": ax.get_title(),
                "labelled_series": len(handles),
                "legend": ax.get_legend() is not None or (fig.legends != [] and len(handles) > 0),
                "image": bool(ax.images) and not ax.axison,
                "empty": not (ax.lines or ax.collections or ax.patches or ax.images or ax.texts),
            }
        )
    return panels


def save(fig, path: str | os.PathLike) -> None:
    """Save ``fig`` as PNG atomically (with its panels' audit in the metadata) and close it."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", metadata={"repro-axes": json.dumps(axes_audit(fig))})
    plt.close(fig)
