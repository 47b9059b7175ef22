"""Stage (baseline): a Poisson GLM of the observed neurons alone, ignoring the hidden ones.

Maximum likelihood by L-BFGS with the analytic gradient X^T (y - exp(X beta)); the coupling
correlation on the observed block is what a latent-free analysis would report.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from repro.papers.poisson_eat.spikes import history, load_spikes
from repro.workflow.io import write_json


def fit_observed_glm(spikes: np.ndarray, kernel: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(weights, biases, log-likelihood) of independent per-neuron Poisson regressions on filtered history."""
    design = np.hstack([np.ones((spikes.shape[0], 1)), history(spikes.astype(float), kernel)])
    weights, biases, total = [], [], 0.0
    for y in spikes.T.astype(float):

        def nll(beta: np.ndarray) -> tuple[float, np.ndarray]:
            eta = design @ beta
            return float(np.sum(np.exp(eta) - y * eta)), design.T @ (np.exp(eta) - y)

        res = optimize.minimize(nll, np.zeros(design.shape[1]), jac=True, method="L-BFGS-B")
        biases.append(res.x[0])
        weights.append(res.x[1:])
        total -= res.fun
    return np.array(weights), np.array(biases), total


def main(job) -> None:
    sim = load_spikes(job.input.spikes)
    n_obs = int(sim["n_observed"])
    weights, _, log_lik = fit_observed_glm(sim["spikes"][:, :n_obs], sim["kernel"])
    corr = float(np.corrcoef(sim["weights"][:n_obs, :n_obs].ravel(), weights.ravel())[0, 1])
    write_json(
        job.output.run,
        {"method": "observed_only", "corr_observed": corr, "log_likelihood": log_lik, "weights": weights},
    )
