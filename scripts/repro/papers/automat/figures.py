"""Stage: accuracy, lattice error and formation-energy error against dose for both controllers; qualitative panels
at the dose where the closed loop's accuracy gain is largest (input counts, denoised image, the closed
loop's reconstruction re-rendered by the verification model at the cell and origin it was found at)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.papers.automat import verifier
from repro.papers.automat.analysis import denoise
from repro.papers.automat.chemistry import columns
from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

LABELS = {"feed_forward": "feed-forward", "closed_loop": "closed loop (verify + retry)"}


def dose_figure(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 3, width=3.4)
    doses = metrics["doses"]
    for method, label in LABELS.items():
        rows = [metrics["by_method_dose"][method][str(d)] for d in doses]
        axes[0][0].semilogx(doses, [r["accuracy"] for r in rows], "o-", label=label)
        axes[0][1].semilogx(doses, [100 * r["lattice_error"] for r in rows], "o-", label=label)
        axes[0][2].semilogx(doses, [r["formation_mae"] for r in rows], "o-", label=label)
    axes[0][0].set(xlabel="dose (e/Å^2)", ylabel="structure-matching accuracy", ylim=(0, 1.05))
    axes[0][1].set(xlabel="dose (e/Å^2)", ylabel="mean in-plane lattice-parameter error (%)")
    axes[0][2].set(xlabel="dose (e/Å^2)", ylabel="formation-energy error (eV/atom, CHGNet)")
    axes[0][0].legend()
    save(fig, path)


def panels_figure(images: dict, rec: pd.DataFrame, metrics: dict, settings: dict, path: str, count: int = 4) -> None:
    from pymatgen.core import Structure

    imaging = settings["imaging"] | settings["denoise"]
    gain = {float(d): metrics["by_method_dose"]["closed_loop"][str(d)]["accuracy"]
            - metrics["by_method_dose"]["feed_forward"][str(d)]["accuracy"] for d in metrics["doses"]}  # fmt: skip
    lowest = max(gain, key=lambda d: (gain[d], -d))  # where the loop helps most (the lowest such dose)
    loop = rec[(rec["method"] == "closed_loop") & (rec["dose"] == lowest) & rec["cif"].notna()].sort_values("image")
    column = int(np.flatnonzero(np.asarray(images["doses"]) == lowest)[0])
    picks = np.linspace(0, len(loop) - 1, min(count, len(loop))).astype(int)
    fig, axes = subplots(len(picks), 3, width=2.8, height=2.9, layout="constrained")
    for row, k in zip(axes, picks):
        r = loop.iloc[k]
        counts = images["noisy"][int(r["image"]), column]
        den, _ = denoise(counts, imaging, tuple(settings["controller"]["a_range"]), None, lowest)
        structure = Structure.from_str(r["cif"], fmt="cif")
        frac, numbers = columns(structure)
        cell, origin = np.reshape(r["cell"], (2, 2)), np.asarray(r["origin"], float)
        shown = verifier.render(cell, frac, numbers, origin, imaging["shape"], imaging["pixel"], settings["verify"])
        truth = str(images["family"][int(r["image"])])
        titles = (
            f"input ({truth}, {lowest:g} e/Å^2)",
            "denoised",
            f"loop: {r['formula']}, NCC {r['ncc']:.2f} (verifier)",
        )
        for ax, img, title in zip(row, (counts, den, shown), titles):
            ax.imshow(img, cmap="gray", extent=(0, imaging["shape"] * imaging["pixel"]) * 2, origin="lower")
            ax.set(title=title, xlabel="x (Å)", ylabel="y (Å)")
            ax.title.set_fontsize(7)
            ax.grid(False)
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    dose_figure(metrics, job.output.accuracy_vs_dose)
    with np.load(job.input.images) as z:
        images = {k: z[k] for k in ("noisy", "doses", "family")}
    panels_figure(images, pd.read_parquet(job.input.reconstructions), metrics, job.params.settings, job.output.panels)
