"""One plotting style for every paper's figures, and an atomic figure writer.

``save`` also records, in the PNG's text metadata (key ``repro-axes``), what each panel shows: its axis
labels, title, how many labelled series it draws and whether it has a legend, and whether it is an image
panel (imshow, or axes hidden), and whether each axis is named (labelled, sharing a labelled axis or a grid row or column
with one, or with category ticks). tests/test_report_browser.py reads it back to check that every figure a reader sees names its
axes and tells its series apart (issue: figures a reader understands).
"""

from __future__ import annotations

import io
import json
import os

import matplotlib
from PIL import Image
from PIL.PngImagePlugin import PngInfo

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


def _overlaps(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return min(a[1], b[1]) - max(a[0], b[0]) > 0.5 * min(a[1] - a[0], b[1] - b[0])


def _axis_named(ax, which: str, others: list) -> bool:
    """Whether a reader can tell what the panel's x or y axis measures: it has a label; a panel sharing the
    axis, or in the same grid column (x) or row (y), has one (grids label their outer panels only); or its
    ticks are category names (a bar chart of methods needs no axis title)."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    if axis.get_label_text():
        return True
    shared = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    box = ax.get_position()
    span = (box.x0, box.x1) if which == "x" else (box.y0, box.y1)
    for other in others:
        other_axis = other.xaxis if which == "x" else other.yaxis
        if other is ax or not other_axis.get_label_text():
            continue
        o = other.get_position()
        if other in shared.get_siblings(ax) or _overlaps(span, (o.x0, o.x1) if which == "x" else (o.y0, o.y1)):
            return True
    ticks = [t.get_text() for t in axis.get_ticklabels()]
    return any(any(c.isalpha() for c in t) and not t.startswith("$") for t in ticks)


def axes_audit(fig) -> list[dict]:
    """Per visible panel of a figure already drawn (tick labels exist only once drawn): labels, title, number
    of labelled series, legend, image panel (see module doc)."""
    figure_legend = bool(fig.legends) or any(ax.get_legend() is not None for ax in fig.get_axes())
    shown = [
        ax
        for ax in fig.get_axes()
        if ax.get_visible() and ax.get_label() != "<colorbar>" and not hasattr(ax, "_colorbar")
    ]
    panels = []
    for ax in shown:
        handles, _ = ax.get_legend_handles_labels()
        panels.append(
            {
                "xlabel": ax.get_xlabel(),
                "ylabel": ax.get_ylabel(),
                "x_named": _axis_named(ax, "x", shown),
                "y_named": _axis_named(ax, "y", shown),
                "title": ax.get_title(),
                "labelled_series": len(handles),
                "legend": ax.get_legend() is not None or (figure_legend and len(handles) > 0),
                "image": bool(ax.images) or not ax.axison,
                "empty": not (ax.lines or ax.collections or ax.patches or ax.images or ax.texts),
            }
        )
    return panels


def save(fig, path: str | os.PathLike) -> None:
    """Save ``fig`` as PNG atomically (with its panels' audit in the metadata) and close it.

    The audit reads the figure as ``savefig`` drew it, and the PNG is written again with the audit added:
    re-encoding the pixels costs a third of the draw a separate audit needs (a figure job's largest cost).
    """
    rendered = io.BytesIO()
    fig.savefig(rendered, format="png")
    audit = json.dumps(axes_audit(fig))
    plt.close(fig)
    image = Image.open(rendered)
    info = PngInfo()
    for key, value in image.text.items():
        info.add_text(key, value)
    info.add_text("repro-axes", audit)
    with atomic_path(path) as tmp:
        image.save(tmp, format="png", pnginfo=info, dpi=image.info.get("dpi", (STYLE["savefig.dpi"],) * 2))
