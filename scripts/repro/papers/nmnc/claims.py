"""NMNC's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

import numpy as np

from repro.reporting.claims import ClaimSpec, Test, learning_check, seed_interval, skill_of


def _seeds(m: dict, fn) -> list[float]:
    return [float(fn(run)) for run in m["per_seed"]]


PRIOR = "the class prior (most frequent training digit)"
TEST_ERROR = "0/1 test error (mean over seeds, per test image)"
LEARNED = {
    "nmnc": "the MLP trained from scratch by NMNC",
    "vnc": "the MLP trained from scratch by VNC",
    "readout": "the readout-only baseline (hidden layers frozen at initialisation)",
}

CLAIMS = [
    learning_check(
        "learn_bp_pretrained",
        "the backprop-pretrained MLP (64-256-256-10, tanh) the manifold is measured on",
        PRIOR,
        skill_of("bp_pretrained"),
        error=TEST_ERROR,
    ),
    learning_check("learn_rnn", "the backprop-trained row-by-row RNN", PRIOR, skill_of("rnn"), error=TEST_ERROR),
    learning_check(
        "learn_width_nets",
        "the backprop-trained MLPs of the width sweep (pooled over widths)",
        PRIOR,
        skill_of("width_nets"),
        error=TEST_ERROR,
    ),
    *[learning_check(f"learn_{k}", name, PRIOR, skill_of(k), error=TEST_ERROR) for k, name in LEARNED.items()],
    ClaimSpec(
        "nmnc_estimator_unbiased",
        "check",
        "Noise correlation on a linear readout (16 units, squared error): with 5,000 forward passes (2,500 "
        "antithetic pairs) the estimate's cosine with the true gradient > 0.99 (an estimator property)",
        Test(">", 0.99),
        lambda m: m["unbiased_cosine"],
    ),
    ClaimSpec(
        "nmnc_jacobian_in_manifold",
        "paper",
        "After backprop training the top-8 activity principal components capture > 0.5 of the output Jacobian's "
        "energy rho_k = ||J U_k||^2 / ||J||^2 in both 256-unit hidden layers (random subspace: k/n = 0.03); "
        "smallest layer, t interval over 3 seeds (digits stand in for CIFAR-10)",
        Test(">", 0.5),
        lambda m: seed_interval(_seeds(m, lambda r: np.min(r["rho_k"]))),
        rests_on=("learn_bp_pretrained",),
    ),
    ClaimSpec(
        "nmnc_cosine_beats_isotropic_and_random",
        "paper",
        "At 16 forward passes per layer, the median cosine of the NMNC activity-gradient estimate with the true "
        "gradient exceeds both vanilla (isotropic) noise correlation's and the random 8-dimensional subspace "
        "control's, in every hidden layer (smallest margin, t interval over 3 seeds)",
        Test(">", 0.0),
        lambda m: seed_interval(_seeds(m, lambda r: r["cosine_margin"])),
        rests_on=("learn_bp_pretrained",),
    ),
    ClaimSpec(
        "nmnc_accuracy_beats_vnc",
        "paper",
        "Trained from scratch with the same perturbation budget (16 forward passes per hidden layer and update, "
        "same updates), NMNC's test accuracy exceeds both VNC's and that of the readout-only baseline (hidden "
        "layers frozen at initialisation, the same readout rule), so that the gain comes from credit assigned to "
        "the hidden layers (smallest margin, t interval over 3 seeds; digits and a 3-epoch budget stand in for "
        "CIFAR-10 training)",
        Test(">", 0.0),
        lambda m: seed_interval(_seeds(m, lambda r: r["nmnc_margin_over_vnc_and_readout"])),
        rests_on=("learn_nmnc", "learn_vnc", "learn_readout"),
    ),
    ClaimSpec(
        "nmnc_dimension_sublinear_in_width",
        "paper",
        "The participation ratio of the last hidden layer's activity (backprop-trained MLPs) grows sub-linearly "
        "with width over the widths up to the input dimension (above it the input's rank would cap the dimension "
        "by construction): log-log slope < 0.5 (t interval over 3 seeds)",
        Test("<", 0.5),
        lambda m: seed_interval(_seeds(m, lambda r: r["pr_width_slope"])),
        rests_on=("learn_width_nets",),
    ),
    ClaimSpec(
        "nmnc_rnn_jacobian_in_manifold",
        "paper",
        "Recurrent network (64-unit vanilla RNN reading the 8 rows of each digit, backprop-trained): the top-8 "
        "principal components of its hidden states capture > 0.5 of the energy of the logits' Jacobian with "
        "respect to the hidden state, over all steps (random subspace: k/n = 0.125; t interval over 3 seeds)",
        Test(">", 0.5),
        lambda m: seed_interval(_seeds(m, lambda r: r["rnn"]["rho_k"])),
        rests_on=("learn_rnn",),
    ),
    ClaimSpec(
        "nmnc_rnn_cosine_beats_isotropic_and_random",
        "paper",
        "Recurrent network, hidden state at the middle step, 16 forward passes: the NMNC estimate's median "
        "cosine with the true gradient exceeds VNC's and the random-subspace control's (smallest margin, t "
        "interval over 3 seeds)",
        Test(">", 0.0),
        lambda m: seed_interval(_seeds(m, lambda r: r["rnn_cosine_margin"])),
        rests_on=("learn_rnn",),
    ),
]
