"""Stage: fields on unseen geometries, learned partition-of-unity functions, ID/OOD errors, conservation and
Newton statistics."""

from __future__ import annotations

import numpy as np
from matplotlib.tri import Triangulation

from repro.papers.geo_newf.store import by_family, read_split
from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

LABELS = {"geonew": "Geo-NeW-lite", "regression": "regression transformer"}


def fields(samples: list[dict], preds, path: str) -> None:
    picks = [idx[0] for idx in by_family(samples).values()]
    fig, axes = subplots(len(picks), 3, width=2.8, height=2.5, layout="constrained")
    for row, i in enumerate(picks):
        s = samples[i]
        tri = Triangulation(s["nodes"][:, 0], s["nodes"][:, 1], s["cells"])
        panels = [("reference FE", s["u"]), *((LABELS[k], preds[f"{k}/test_ood/{i}"]) for k in LABELS)]
        lo, hi = float(np.min(s["u"])), float(np.max(s["u"]))
        for ax, (title, u) in zip(axes[row], panels):
            im = ax.tripcolor(tri, u, vmin=lo, vmax=hi, shading="gouraud")
            ax.set(title=f"{title} ({s['family']})", aspect="equal")
            ax.set(xlabel="x (dimensionless)", ylabel="y")
        fig.colorbar(im, ax=axes[row][-1], label="u (dimensionless)")
    save(fig, path)


def pou(samples: list[dict], preds, path: str) -> None:
    families = [k.split("/", 1)[1] for k in preds if k.startswith("pou/")]
    fig, axes = subplots(len(families), 4, width=2.4, height=2.3)
    for row, family in enumerate(families):
        s = samples[int(preds[f"pou_index/{family}"])]
        w = preds[f"pou/{family}"]
        tri = Triangulation(s["nodes"][:, 0], s["nodes"][:, 1], s["cells"])
        axes[row][0].tripcolor(tri, np.argmax(w, axis=0), cmap="tab20", shading="flat")
        axes[row][0].set(title=f"dominant coarse function ({family})", aspect="equal", ylabel="y (dimensionless)")
        for col, k in enumerate((1, len(w) // 2, len(w) - 1), start=1):
            axes[row][col].tripcolor(tri, w[k], vmin=0, vmax=1, shading="gouraud")
            axes[row][col].set(title=f"psi_{k}", aspect="equal")
    for ax in axes[-1]:
        ax.set_xlabel("x (dimensionless)")
    save(fig, path)


def generalisation(metrics: dict, path: str) -> None:
    """Per-seed mean errors in and out of distribution (points, bars at the mean) and their ratio per model."""
    fig, axes = subplots(1, 2, width=3.6, height=3.0, layout="constrained")
    names = list(metrics["models"])
    trivial = metrics.get("trivial", {}).get("id_error_per_mesh")
    width = 0.38
    for k, name in enumerate(names):
        m = metrics["models"][name]
        for j, key in enumerate(("id_error", "ood_error")):
            x = j + (k - 0.5) * width
            axes[0][0].bar(x, np.mean(m[key]), width, color=f"C{k}", alpha=0.35 + 0.35 * j,
                           label=f"{LABELS[name]}" if j == 0 else None)  # fmt: skip
            axes[0][0].scatter(np.full(len(m[key]), x), m[key], color=f"C{k}", s=12, zorder=3)
        axes[0][1].bar(k, np.mean(m["ood_id_ratio"]), 0.6, color=f"C{k}", alpha=0.5)
        axes[0][1].scatter(np.full(len(m["ood_id_ratio"]), k), m["ood_id_ratio"], color=f"C{k}", s=12, zorder=3)
    if trivial is not None:
        axes[0][0].axhline(float(np.mean(trivial)), color="k", ls=":", lw=1, label="best constant field (ID)")
    axes[0][0].set_xticks([0, 1], ["in distribution", "out of distribution"])
    axes[0][0].set(ylabel="mean relative L2 error (dimensionless)", title="errors (points: seeds)")
    axes[0][0].legend(fontsize=7)
    axes[0][1].axhline(1.0, color="grey", lw=0.8)
    axes[0][1].set_xticks(range(len(names)), [LABELS[n] for n in names])
    axes[0][1].set(ylabel="OOD / ID error ratio (dimensionless)", title="degradation out of distribution")
    save(fig, path)


def conservation(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 2, width=3.6, layout="constrained")
    geo = metrics["models"]["geonew"]["per_seed"]
    reg = metrics["models"]["regression"]["per_seed"]
    floor = 1e-18

    def values(runs, key):
        return np.log10(np.maximum([v for r in runs.values() for sp in r.values() for v in sp[key]], floor))

    axes[0][0].hist(values(geo, "global_balance"), bins=20, label="Geo-NeW, learned law (Whitney fluxes)")
    axes[0][0].hist(values(reg, "true_law_global_imbalance"), bins=20, alpha=0.7, label="regression, true law")
    axes[0][0].set(xlabel="log10 global imbalance / total load", ylabel="test meshes x seeds")
    axes[0][0].legend(fontsize=6)
    iters = [v for r in geo.values() for sp in r.values() for v in sp["iterations"]]
    axes[0][1].hist(iters, bins=np.arange(0, max(iters) + 2) - 0.5)
    axes[0][1].set(xlabel="Newton iterations to tolerance (Geo-NeW)", ylabel="test meshes x seeds")
    save(fig, path)


def main(job) -> None:
    ood = read_split(job.input.meshes, "test_ood")
    preds = dict(np.load(job.input.predictions))
    metrics = read_json(job.input.metrics)
    fields(ood, preds, job.output.fields)
    pou(ood, preds, job.output.pou)
    generalisation(metrics, job.output.generalisation)
    conservation(metrics, job.output.conservation)
