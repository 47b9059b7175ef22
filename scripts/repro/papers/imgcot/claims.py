"""ImgCoT's claims as functions of the evaluate stage's metrics (see repro.reporting.claims).

Small-scale stand-ins (named in every paper claim): a 2-layer transformer trained from scratch on generated
modular arithmetic instead of a pretrained LLM on GSM8K/MATH, and a tiny VQ-VAE / GRU autoencoder as the
image and text tokenizers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Test, bootstrap_interval

STAND_IN = "tiny LM from scratch on generated mod-p arithmetic, stand-in for a pretrained LLM on GSM8K"


def _gain(better: str, worse: str, split: str = "test"):
    """Accuracy difference on the same problems with a paired bootstrap interval."""

    def measure(m: Mapping[str, Any]):
        x = np.asarray(m["correct"][better][split], dtype=float)
        y = np.asarray(m["correct"][worse][split], dtype=float)
        return bootstrap_interval([x, y], lambda u, v: np.mean(u) - np.mean(v), paired=True)

    return measure


def _token_margin(m: Mapping[str, Any]) -> float:
    """Largest per-problem (L-ImgCoT k=1 reasoning tokens - full-CoT tokens); < 0 means fewer everywhere."""
    loose = np.asarray(m["target_tokens"]["l_imgcot_k1"], dtype=float)
    full = np.asarray(m["target_tokens"]["full_cot"], dtype=float)
    return float(np.max(loose - full))


def _latent_length_spread(m: Mapping[str, Any]) -> float:
    tokens = np.asarray(m["target_tokens"]["imgcot"], dtype=float)
    return float(np.max(np.abs(tokens - m["n_latent"])))


CLAIMS = [
    ClaimSpec(
        "imgcot_render_fits",
        "check",
        "Every rendered CoT image holds all its lines: share of images whose line bounding boxes lie inside the "
        "canvas at the font size the fit rule chose = 1 (the rule guarantees it down to the smallest size).",
        Test(">=", 1.0),
        lambda m: m["render_fit_share"],
    ),
    ClaimSpec(
        "imgcot_latent_length_fixed",
        "check",
        "ImgCoT's reasoning is exactly n_latent tokens on every problem: largest deviation = 0 (by construction).",
        Test("<=", 0.0),
        _latent_length_spread,
    ),
    ClaimSpec(
        "imgcot_loose_fewer_tokens_than_full_cot",
        "check",
        "L-ImgCoT (k=1) uses fewer reasoning tokens than the full CoT on every problem: largest per-problem "
        "difference < 0 (holds when n_latent is below the length of all but one step).",
        Test("<", 0.0),
        _token_margin,
    ),
    ClaimSpec(
        "imgcot_full_cot_beats_no_cot",
        "paper",
        f"Full textual CoT accuracy minus no-CoT accuracy on test problems with 3 or more steps > 0 (paired "
        f"bootstrap; {STAND_IN}).",
        Test(">", 0.0),
        _gain("full_cot", "no_cot", "test_long"),
    ),
    ClaimSpec(
        "imgcot_image_beats_text_latents",
        "paper",
        f"Same number of latent tokens: ImgCoT (image VQ codes) accuracy minus text-autoencoder latents accuracy > 0 "
        f"on test problems (paired bootstrap; {STAND_IN}).",
        Test(">", 0.0),
        _gain("imgcot", "text_ae"),
    ),
    ClaimSpec(
        "imgcot_image_latents_generalise",
        "paper",
        f"On held-out templates (unseen program structures): ImgCoT accuracy minus text-AE latents accuracy > 0 "
        f"(paired bootstrap; {STAND_IN}).",
        Test(">", 0.0),
        _gain("imgcot", "text_ae", "heldout"),
    ),
    ClaimSpec(
        "imgcot_loose_beats_imgcot",
        "paper",
        f"L-ImgCoT (latents + the 1 lowest-likelihood textual step) accuracy minus ImgCoT accuracy > 0 (paired "
        f"bootstrap; {STAND_IN}).",
        Test(">", 0.0),
        _gain("l_imgcot_k1", "imgcot"),
    ),
    ClaimSpec(
        "imgcot_lowlik_selection_beats_random",
        "paper",
        f"Step selection ablation: L-ImgCoT keeping the lowest-likelihood step minus keeping a random step > 0 "
        f"(paired bootstrap; {STAND_IN}).",
        Test(">", 0.0),
        _gain("l_imgcot_k1", "l_imgcot_random_k1"),
    ),
]
