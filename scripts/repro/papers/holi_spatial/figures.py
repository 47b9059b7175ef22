"""Stage: the annotation-quality table as bars (F1), the refinement-stage ablation (F2), QA accuracy (F3)."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

LABELS = {
    "single_frame": "single frame",
    "multiview_raw": "multi-view, raw depth",
    "fused": "multi-view, fused",
    "filtered": "+ confidence filter",
    "verified": "+ verifier",
    "oracle": "oracle",
    "ground_truth": "ground truth",
}


def quality_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 2, width=4.0)
    ax_box, ax_depth = axes[0]
    methods = list(m["detection"])
    x = np.arange(len(methods))
    for k, key in enumerate(("iou25", "iou50")):
        ax_box.bar(x + (k - 0.5) * 0.38, [m["detection"][a][key]["ap"] for a in methods], 0.38, label=f"AP{key[3:]}")
    paper = m.get("reported", {})
    if "ap25_3d_detection_scannetpp" in paper:
        ax_box.axhline(paper["ap25_3d_detection_scannetpp"] / 100, color="k", ls="--", lw=0.8, label="paper AP25")
    ax_box.set_xticks(x, [LABELS[a] for a in methods], rotation=35, ha="right")
    ax_box.set(ylabel="3D box AP (fraction, class mean)", ylim=(0, 1.05), title="3D detection")
    ax_box.legend()
    for k, d in enumerate(("noisy", "fused")):
        f1 = np.asarray(m["depth"][d]["f1"])
        ax_depth.scatter(np.full(len(f1), k) + np.linspace(-0.1, 0.1, len(f1)), f1)
        ax_depth.plot([k - 0.2, k + 0.2], [f1.mean()] * 2, color="black")
    for key, label, style in (
        ("depth_f1_scannetpp", "paper: Holi-Spatial", "--"),
        ("depth_f1_scannetpp_baseline_m3_spatial", "paper: M3-Spatial", ":"),
    ):
        if key in paper:
            ax_depth.axhline(paper[key], color="k", ls=style, lw=0.8, label=label)
    ax_depth.set_xticks([0, 1], ["monocular proxy", "multi-view fused"])
    ax_depth.set(
        ylabel=f"depth F1 at {m['depth_tau_m'] * 100:.0f} cm (per unit; bar: mean)", ylim=(0, 1.05), title="depth"
    )
    ax_depth.legend(loc="lower right")
    save(fig, path)


def ablation_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=3.6)
    ax = axes[0][0]
    for a in ("fused", "filtered", "verified"):
        d = m["detection"][a]["iou25"]
        ax.scatter(d["recall_per_unit"], d["precision_per_unit"], alpha=0.4)
        ax.scatter(
            [d["recall"]],
            [d["precision"]],
            s=60,
            marker="D",
            label=LABELS[a],
            color=ax.collections[-1].get_facecolor()[0][:3],
        )
    paper = m.get("reported", {})
    keys = [
        ("box_recall_ablation_before_filtering", "box_precision_ablation_before_filtering"),
        ("box_recall_ablation_confidence_filtering", "box_precision_ablation_confidence_filtering"),
        ("box_recall_ablation_vlm_verification", "box_precision_ablation_vlm_verification"),
    ]
    if all(r in paper and p in paper for r, p in keys):
        ax.plot(
            [paper[r] for r, _ in keys],
            [paper[p] for _, p in keys],
            "k--o",
            mfc="none",
            ms=6,
            lw=0.8,
            label="paper (fused, filtered, verified)",
        )
    ax.set(
        xlabel="recall at IoU 0.25 (fraction of true boxes)",
        ylabel="precision at IoU 0.25 (fraction of boxes)",
        xlim=(0, 1.05),
        ylim=(0, 1.05),
        title="refinement stages",
    )
    ax.legend()
    save(fig, path)


def qa_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=6.0)
    ax = axes[0][0]
    methods = ["single_frame", "fused", "verified", "oracle", "ground_truth"]
    templates = m["qa_templates"]
    width = 0.8 / len(methods)
    for k, a in enumerate(methods):
        ax.bar(
            np.arange(len(templates)) + k * width - 0.4 + width / 2,
            [m["qa"][a]["per_template"].get(t, np.nan) for t in templates],
            width,
            label=LABELS[a],
        )
    ax.set_xticks(np.arange(len(templates)), [t.replace("_", " ") for t in templates], rotation=25, ha="right")
    ax.set(
        ylabel="QA accuracy (fraction correct)",
        ylim=(0, 1.05),
        title="two-view spatial QA answered from each annotation set",
    )
    ax.legend(ncol=3)
    save(fig, path)


def main(job) -> None:
    m = read_json(job.input.metrics)
    quality_figure(m, job.output.quality)
    ablation_figure(m, job.output.ablation)
    qa_figure(m, job.output.qa)
