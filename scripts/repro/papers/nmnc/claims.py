"""NMNC's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

import numpy as np

from repro.reporting.claims import ClaimSpec, Test, seed_interval


def _seeds(m: dict, fn) -> list[float]:
    return [float(fn(run)) for run in m["per_seed"]]


CLAIMS = [
    ClaimSpec(
        "nmnc_estimator_unbiased",
        "check",
        "Noise correlation on a linear readout (16 units, squared error): with 5,000 forward passes (2,500 "
        "antithetic pairs) the estimate's cosine with the true gradient > 0.99 (an estimator property)",
        Test(">", 0.99),
        lambda m: m["unbiased_cosine"],
    ),
    ClaimSpec(
        "nmnc_backprop_reference_learns",
        "check",
        "The backprop-pretrained MLP (64-256-256-10, tanh) on sklearn's 8x8 digits reaches test accuracy > 0.9 "
        "(mean over seeds): the network the manifold is measured on has learnt the task",
        Test(">", 0.9),
        lambda m: seed_interval(_seeds(m, lambda r: r["bp_pretrained_test_accuracy"])),
    ),
    ClaimSpec(
        "nmnc_jacobian_in_manifold",
        "paper",
        "After backprop training the top-8 activity principal components capture > 0.5 of the output Jacobian's "
        "energy rho_k = ||J U_k||^2 / ||J||^2 in both 256-unit hidden layers (random subspace: k/n = 0.03); "
        "smallest layer, t interval over 3 seeds (digits stand in for CIFAR-10)",
        Test(">", 0.5),
        lambda m: seed_interval(_seeds(m, lambda r: np.min(r["rho_k"]))),
    ),
    ClaimSpec(
        "nmnc_cosine_beats_isotropic_and_random",
        "paper",
        "At 16 forward passes per layer, the median cosine of the NMNC activity-gradient estimate with the true "
        "gradient exceeds both vanilla (isotropic) noise correlation's and the random 8-dimensional subspace "
        "control's, in every hidden layer (smallest margin, t interval over 3 seeds)",
        Test(">", 0.0),
        lambda m: seed_interval(_seeds(m, lambda r: r["cosine_margin"])),
    ),
    ClaimSpec(
        "nmnc_accuracy_beats_vnc",
        "paper",
        "Trained from scratch with the same perturbation budget (16 forward passes per hidden layer and update, "
        "same updates), NMNC's test accuracy exceeds VNC's (difference, t interval over 3 seeds; digits and a "
        "3-epoch budget stand in for CIFAR-10 training)",
        Test(">", 0.0),
        lambda m: seed_interval(_seeds(m, lambda r: r["test_accuracy"]["nmnc"] - r["test_accuracy"]["vnc"])),
    ),
    ClaimSpec(
        "nmnc_dimension_sublinear_in_width",
        "paper",
        "The participation ratio of the last hidden layer's activity grows sub-linearly with width 64 -> 512: "
        "log-log slope < 0.5 (t interval over 3 seeds)",
        Test("<", 0.5),
        lambda m: seed_interval(_seeds(m, lambda r: r["pr_width_slope"])),
    ),
    ClaimSpec(
        "nmnc_rnn_jacobian_in_manifold",
        "paper",
        "Recurrent network (64-unit vanilla RNN reading the 8 rows of each digit, backprop-trained): the top-8 "
        "principal components of its hidden states capture > 0.5 of the energy of the logits' Jacobian with "
        "respect to the hidden state, over all steps (random subspace: k/n = 0.125; t interval over 3 seeds)",
        Test(">", 0.5),
        lambda m: seed_interval(_seeds(m, lambda r: r["rnn"]["rho_k"])),
    ),
    ClaimSpec(
        "nmnc_rnn_cosine_beats_isotropic_and_random",
        "paper",
        "Recurrent network, hidden state at the middle step, 16 forward passes: the NMNC estimate's median "
        "cosine with the true gradient exceeds VNC's and the random-subspace control's (smallest margin, t "
        "interval over 3 seeds)",
        Test(">", 0.0),
        lambda m: seed_interval(_seeds(m, lambda r: r["rnn_cosine_margin"])),
    ),
]
