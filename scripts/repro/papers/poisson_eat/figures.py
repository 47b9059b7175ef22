"""Stage: the paper's figures from our runs (moments and W1 vs tau, gradient quality, P-VAE, POGLM)."""

from __future__ import annotations

import numpy as np

from repro.papers.poisson_eat.closed_forms import eat_moments
from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

LABELS = {
    "eat_sigmoid": "EAT sigmoid",
    "eat_cubic": "EAT cubic",
    "eat_linear": "EAT linear",
    "eat_cosine": "EAT cosine",
    "gsm": "GSM",
    "score": "score function",
}


def moments_figure(fidelity: dict, path: str) -> None:
    """Fig. 1: mean / rate and variance / rate against tau, MC points over closed-form lines."""
    fig, axes = subplots(1, 2, width=3.4)
    grid = fidelity["grid"]
    methods = sorted({r["method"] for r in grid}, key=list(LABELS).index)
    fine = np.linspace(0.02, 1.0, 60)
    for i, method in enumerate(methods):
        rows = [r for r in grid if r["method"] == method]
        color = f"C{i}"
        for ax, key in zip(axes[0], ("mean", "var")):
            ax.plot(
                [r["tau"] for r in rows],
                [r[key] / r["rate"] for r in rows],
                "o",
                ms=3,
                color=color,
                label=LABELS[method],
            )
            if method.startswith("eat_"):
                ax.plot(fine, [eat_moments(1.0, t, method[4:])[key == "var"] for t in fine], "-", color=color, lw=1)
    for ax in axes[0]:
        ax.axhline(1.0, color="k", ls=":", lw=1, label="Poisson (exactly the rate)")
    axes[0][0].set(
        xlabel="temperature tau (dimensionless)", ylabel="E[z] / lambda (dimensionless)", title="first moment"
    )
    axes[0][1].set(xlabel="temperature tau (dimensionless)", ylabel="Var[z] / lambda (dimensionless)",
                   title="second moment (Poisson: 1)")  # fmt: skip
    axes[0][0].legend(title="points: Monte Carlo, lines: closed form")
    save(fig, path)


def w1_figure(fidelity: dict, path: str) -> None:
    """Fig. 2: Wasserstein-1 to Poisson, averaged over rates, against tau."""
    fig, axes = subplots(1, 1, width=3.6)
    ax = axes[0][0]
    for method in sorted({r["method"] for r in fidelity["curve"]}, key=list(LABELS).index):
        rows = [r for r in fidelity["curve"] if r["method"] == method]
        ax.plot([r["tau"] for r in rows], [r["w1_mean"] for r in rows], "o-", ms=3, label=LABELS[method])
    ax.set(xlabel="temperature tau (dimensionless)", ylabel="W1 to Poisson (counts, mean over rates)")
    ax.legend(title="relaxation")
    save(fig, path)


def gradients_figure(gradients: dict, path: str) -> None:
    """Fig. 3: BiasEnergy, NoiseEnergy and cosine to the exact gradient against tau."""
    functions = sorted({r["function"] for r in gradients["rows"]})
    fig, axes = subplots(len(functions), 3, width=3.0, height=3.0, layout="constrained")
    ylabels = {"bias_energy": "BiasEnergy (squared, log)", "noise_energy": "NoiseEnergy (squared, log)",
               "cosine": "cosine to the exact gradient"}  # fmt: skip
    for i, function in enumerate(functions):
        rows = [r for r in gradients["rows"] if r["function"] == function]
        for method in sorted({r["method"] for r in rows}, key=list(LABELS).index):
            sel = [r for r in rows if r["method"] == method]
            for j, key in enumerate(("bias_energy", "noise_energy", "cosine")):
                ax = axes[i][j]
                if method == "score":
                    ax.axhline(sel[0][key], ls="--", color="k", lw=1, label=LABELS[method])
                else:
                    ax.plot([r["tau"] for r in sel], [r[key] for r in sel], "o-", ms=3, label=LABELS[method])
                ax.set(xlabel="temperature tau", ylabel=ylabels[key], title=f"{key.replace('_', ' ')}, g = {function}")
                if key != "cosine":
                    ax.set_yscale("log")
    axes[0][0].legend(title="estimator")
    save(fig, path)


def vae_figure(runs: list[dict], path: str) -> None:
    """Fig. 4: P-VAE test ELBO (exact Poisson latents) against tau, the trivial mean-image model's, and relaxed
    training curves."""
    fig, axes = subplots(1, 2, width=3.6, height=3.0, layout="constrained")
    trivial = None
    for run in runs:
        taus = sorted({r["tau"] for r in run["vae"]})
        per_tau = [[r for r in run["vae"] if r["tau"] == t] for t in taus]
        elbo = [np.mean([r["test_elbo"] for r in rs]) for rs in per_tau]
        sem = [np.std(np.mean([r["test_elbo_per_image"] for r in rs], 0)) / np.sqrt(len(rs[0]["test_elbo_per_image"]))
               for rs in per_tau]  # fmt: skip
        (line,) = axes[0][0].plot(taus, elbo, "o-", ms=3, label=LABELS[run["method"]])
        axes[0][0].errorbar(taus, elbo, yerr=1.96 * np.asarray(sem), fmt="none", color=line.get_color(), capsize=2)
        trivial = float(np.mean(run["vae"][0]["trivial_elbo_per_image"]))
        for r in run["vae"]:
            axes[0][1].plot(r["train_elbo_curve"], color=line.get_color(), alpha=0.3 + 0.7 * r["tau"] / max(taus))
    if trivial is not None:
        axes[0][0].axhline(0.8 * trivial, color="k", ls=":", lw=1, label="learning-check bar (20% above mean image)")
    axes[0][0].set(xlabel="temperature tau (dimensionless)", ylabel="test ELBO per image (nats, exact latents)",
                   title="temperature robustness")  # fmt: skip
    axes[0][1].set(
        xlabel="epoch", ylabel="relaxed training ELBO per image (nats)", title="training (darker: larger tau)"
    )
    axes[0][0].legend(loc="lower center")
    save(fig, path)


def poglm_figure(runs: list[dict], baseline: dict, truth: np.ndarray, n_observed: int, path: str) -> None:
    """POGLM: fitted against true couplings of the observed block, one panel per method plus the baseline."""
    panels = [(LABELS[r["method"]], np.asarray(r["poglm"][0]["weights"])[:n_observed, :n_observed]) for r in runs]
    panels.append(("observed only", np.asarray(baseline["weights"])))
    fig, axes = subplots(1, len(panels), width=2.6, layout="constrained")
    true = truth[:n_observed, :n_observed].ravel()
    for ax, (label, fitted) in zip(axes[0], panels):
        ax.plot(true, fitted.ravel(), ".", ms=3)
        lim = [min(true.min(), fitted.min()), max(true.max(), fitted.max())]
        ax.plot(lim, lim, "k--", lw=0.8)
        ax.set(
            xlabel="true coupling (log-rate per filtered spike)",
            ylabel="fitted coupling",
            title=f"{label}: r = {np.corrcoef(true, fitted.ravel())[0, 1]:.3f}",
        )
    save(fig, path)


def main(job) -> None:
    fidelity = read_json(job.input.fidelity)
    runs = [read_json(p) for p in job.input.runs]
    with np.load(job.input.spikes) as sim:
        truth, n_observed = sim["weights"], int(sim["n_observed"])
    moments_figure(fidelity, job.output.moments)
    w1_figure(fidelity, job.output.wasserstein)
    gradients_figure(read_json(job.input.gradients), job.output.gradients)
    vae_figure(runs, job.output.vae)
    poglm_figure(runs, read_json(job.input.baseline), truth, n_observed, job.output.poglm)
