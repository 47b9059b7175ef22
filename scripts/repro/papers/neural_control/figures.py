"""Stage: best loss against equilibrium solves per task, realised shapes against targets, gradient memory."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

LABELS = {"adjoint_rhc": "Adjoint+RHC", "adjoint_only": "Adjoint-only", "spsa": "SPSA", "cem": "CEM"}
UNITS = {"t1": "m^2", "t2": "m^2", "t3": "1/m"}


def shape_from_curvature(kappa: np.ndarray, start: np.ndarray, direction: np.ndarray, l0: float) -> np.ndarray:
    """Node positions of an inextensible polyline with discrete curvature 2 tan(phi / 2) / l0 at its interior
    nodes, from its first node and first edge direction (the fixed clamp)."""
    phi = 2.0 * np.arctan(kappa * l0 / 2.0)
    angles = np.arctan2(direction[1], direction[0]) + np.concatenate([[0.0], np.cumsum(phi)])
    steps = l0 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    return np.vstack([start, start + np.cumsum(steps, axis=0)])


def task_name(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".npz")


def loss_curves(runs: list[str], path: str) -> None:
    fig, axes = subplots(1, len(runs), width=3.4, height=2.8, layout="constrained")
    for ax, run_path in zip(axes[0], runs):
        data = np.load(run_path)
        for m, method in enumerate(data["methods"]):
            hist = data["history"][m]  # (case, seed, entry, 2): solves, best loss
            solves, losses = hist[..., 0].reshape(-1, hist.shape[2]), hist[..., 1].reshape(-1, hist.shape[2])
            grid = np.arange(1, int(np.nanmax(solves)) + 1)
            curves = []
            for s, lval in zip(solves, losses):
                ok = np.isfinite(s) & np.isfinite(lval)
                if ok.any():
                    curves.append(np.interp(grid, s[ok], lval[ok], left=np.nan))
            median = np.nanmedian(np.array(curves), axis=0)
            if str(method) == "adjoint_rhc":  # the realised closed-loop loss exists only once the run ends
                ax.plot(grid[-1], median[-1], "o", label=LABELS[str(method)])
            else:  # a line where the history has several points, and its final point marked (CEM may have one)
                (line,) = ax.plot(grid, median, label=LABELS[str(method)])
                ax.plot(grid[-1], median[-1], "s", ms=4, color=line.get_color())
            if m == 0:
                start = np.median(data["initial_loss"])
                ax.axhline(start, color="grey", ls=":", lw=1, label="untrained controller (median)")
        ax.set(title=task_name(run_path).upper(), xlabel="equilibrium solves spent",
               ylabel=f"best task loss, median over cases and seeds ({UNITS[task_name(run_path)]})")  # fmt: skip
        ax.set_yscale("log")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
    save(fig, path)


def shapes(runs: list[str], cases: list[str], path: str) -> None:
    pairs = list(zip(runs, cases))
    ncases = int(np.load(cases[0])["target"].shape[0])
    fig, axes = subplots(len(pairs), ncases, width=2.8, height=2.2, layout="constrained")
    for row, (run_path, case_path) in enumerate(pairs):
        data, spec = np.load(run_path), np.load(case_path)
        for c in range(ncases):
            ax = axes[row][c]
            for m, method in enumerate(data["methods"]):
                final = data["trajectory"][m, c, 0, -1].reshape(-1, 2)
                ax.plot(final[:, 0], final[:, 1], lw=1, label=LABELS[str(method)])
            if task_name(run_path) == "t1":
                ax.plot(*spec["target"][c], "k*", ms=8, label="target node")
            elif task_name(run_path) == "t2":
                ax.plot(*spec["target"][c].T, "k:", lw=1.5, label="target midpoint path")
            else:
                nodes, length = int(spec["rod"][0]), float(spec["rod"][1])
                first = data["trajectory"][0, c, 0, -1].reshape(-1, 2)
                target = shape_from_curvature(spec["target"][c], first[0], first[1] - first[0], length / (nodes - 1))
                ax.plot(*target.T, "k--", lw=1, label="target shape (from its curvature)")
            ax.set(title=f"{task_name(run_path).upper()} case {c}", xlabel="x (m)", ylabel="y (m)")
    handles = {}
    for ax in axes.ravel():
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=len(handles))
    save(fig, path)


def memory(gradients: dict, path: str) -> None:
    rows = sorted(gradients["memory"], key=lambda r: r["newton_iterations"])
    n = [r["newton_iterations"] for r in rows]
    fig, axes = subplots(1, 1, width=4.0)
    ax = axes[0][0]
    ax.plot(n, [r["unrolled_bytes"] / 1e6 for r in rows], "o-", label="unrolled autograd")
    ax.plot(n, [r["adjoint_bytes"] / 1e6 for r in rows], "s-", label="adjoint")
    ax.set(xlabel="Newton iterations of the forward solve", ylabel="autograd saved tensors (MB)", yscale="log")
    ax.legend()
    save(fig, path)


def main(job) -> None:
    loss_curves(list(job.input.runs), job.output.loss_curves)
    shapes(list(job.input.runs), list(job.input.cases), job.output.shapes)
    memory(read_json(job.input.gradients), job.output.memory)
