"""Stage: learned coupling curves (F1), scores per coupling over seeds (F2), the GP-EI search traces on the
backbone windows and on the HP lattice (F3), generated backbones against real ones (F4)."""

from __future__ import annotations

import numpy as np

from repro.papers.geocoupling.scores import phi_psi
from repro.papers.geocoupling.windows import internal
from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json, read_npz

FIXED = {"synchronous": 1.0, "alpha_0.5": 0.5, "alpha_2": 2.0}
PANELS = (
    ("consistency", "consistency (PMI, nats/residue)"),
    ("validity", "validity (fraction of samples)"),
    ("nearest_rmsd", "nearest real fragment RMSD (Å)"),
    ("structure_diversity", "structural diversity (Å, CA dRMS)"),
)


def curves_figure(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=3.8, height=3.4)
    ax = axes[0][0]
    s = np.linspace(0, 1, 201)
    for name, alpha in FIXED.items():
        ax.plot(s, s**alpha, "--", lw=1, label=f"{name} (alpha = {alpha:g})")
    for seed, alpha in zip(metrics["seeds"], metrics["learned_alpha"]):
        ax.plot(s, s**alpha, lw=2, label=f"learned, seed {seed} (alpha = {alpha:.2f})")
    ax.set(xlabel="t_struct (structure clock)", ylabel="t_seq (sequence clock)",
           title="coupling curves (below the diagonal: structure leads)")  # fmt: skip
    ax.legend(fontsize=6)
    save(fig, path)


def comparison_figure(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, len(PANELS), width=3.1)
    couplings = metrics["couplings"]
    real = metrics["real_test_windows"]
    for ax, (key, label) in zip(axes[0], PANELS):
        values = [np.asarray(metrics["per_coupling"][c][key], dtype=float) for c in couplings]
        for k, v in enumerate(values):
            ax.bar(k, np.mean(v), color=f"C{k}", alpha=0.6)
            ax.plot(np.full(v.size, k), v, "k.", ms=4, label="one seed" if k == 0 else None)
        ax.axhline(real[key], color="k", ls="--", lw=1, label="real test windows")
        ax.set_xticks(range(len(couplings)), couplings, rotation=45, ha="right", fontsize=7)
        ax.set(ylabel=label)
    axes[0][0].legend(fontsize=6)
    save(fig, path)


def ticks(ax) -> None:
    values = [0.25, 0.5, 1.0, 2.0, 4.0]
    ax.set_xticks(values, [f"{v:g}" for v in values])
    ax.minorticks_off()


def search_figure(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 2, width=4.2)
    ax = axes[0][0]
    search = metrics["search"]
    for seed, x, y, r in zip(metrics["seeds"], search["log_alpha"], search["score"], search["round"]):
        order = np.argsort(x)
        line = ax.plot(np.exp(np.asarray(x)[order]), np.asarray(y)[order], "-", lw=0.8, alpha=0.6)[0]
        ax.scatter(
            np.exp(x), y, c=[line.get_color()], s=12 + 18 * np.asarray(r), label=f"seed {seed} (larger: round 1)"
        )
    ax.set(xscale="log", xlabel="alpha (t_seq = t_struct ** alpha)", ylabel="validation quality (validity x PMI)",
           title="GP-EI search, backbone windows")  # fmt: skip
    ticks(ax)
    ax.legend(fontsize=7)
    ax = axes[0][1]
    check = metrics["search_check"]
    ax.plot(check["grid_alpha"], check["grid_score"], "k.-", lw=1, label="dense grid")
    ax.scatter(check["search_alpha"], check["search_score"], c="C3", zorder=3, label="GP-EI evaluations")
    ax.axvline(check["picked_alpha"], color="C3", ls="--", lw=1, label="GP-EI pick")
    ax.set(xscale="log", xlabel="alpha", ylabel="fraction consistent (valid walk at E_min)",
           title="search check, HP lattice")  # fmt: skip
    ticks(ax)
    ax.legend(fontsize=7)
    save(fig, path)


def samples_figure(bench: dict, runs: dict, path: str, shown: int = 4) -> None:
    """Ramachandran plots of real test windows, the learned coupling's samples (all seeds) and the untrained
    initialisation's, and CA traces of a few generated windows."""
    learned = np.flatnonzero(runs["coupling"] == "learned")
    generated = runs["backbone"][learned].reshape(-1, *runs["backbone"].shape[2:])
    untrained = runs["untrained_backbone"][learned].reshape(-1, *runs["backbone"].shape[2:])
    fig, axes = subplots(1, 4, width=2.8, height=2.8)
    for ax, (name, bb) in zip(axes[0], (("real test windows", bench["test_backbone"]), ("learned coupling", generated),
                                         ("untrained initialisation", untrained))):  # fmt: skip
        phi, psi = (np.degrees(a).ravel() for a in phi_psi(internal(bb)[2]))
        ax.scatter(phi, psi, s=1, alpha=0.2, color="k", label=name)
        ax.set(xlim=(-180, 180), ylim=(-180, 180), xlabel="phi (degrees)", ylabel="psi (degrees)", title=name)
    ax = axes[0][3]
    for k in range(shown):
        ca = generated[k, :, 1] - generated[k, :, 1].mean(0)
        _, _, vt = np.linalg.svd(ca)
        xy = ca @ vt[:2].T
        ax.plot(xy[:, 0] + 14 * k, xy[:, 1], "o-", ms=3, lw=1, label=f"sample {k}")
    ax.set(xlabel="first principal axis (Å, offset per sample)", ylabel="second principal axis (Å)",
           title="generated CA traces (learned)")  # fmt: skip
    ax.legend(fontsize=6)
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    curves_figure(metrics, job.output.curves)
    comparison_figure(metrics, job.output.comparison)
    search_figure(metrics, job.output.search)
    samples_figure(read_npz(job.input.benchmark), read_npz(job.input.runs), job.output.samples)
