"""ImgCoT's claims as functions of the evaluate stage's metrics (see repro.reporting.claims).

Small-scale stand-ins (named in every paper claim): a 2-layer transformer trained from scratch on generated
modular arithmetic instead of a pretrained LLM on GSM8K/MATH, and a tiny VQ-VAE / GRU autoencoder as the
image and text tokenizers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.papers.imgcot.methods import METHODS
from repro.reporting.claims import ClaimSpec, Test, bootstrap_interval, learning_check, skill_over_trivial

STAND_IN = "tiny LM from scratch on generated mod-p arithmetic, stand-in for a pretrained LLM on GSM8K"


def _gain(better: str, worse: str, split: str = "test"):
    """Accuracy difference on the same problems with a paired bootstrap interval."""

    def measure(m: Mapping[str, Any]):
        x = np.asarray(m["correct"][better][split], dtype=float)
        y = np.asarray(m["correct"][worse][split], dtype=float)
        return bootstrap_interval([x, y], lambda u, v: np.mean(u) - np.mean(v), paired=True)

    return measure


def _token_margin(m: Mapping[str, Any]) -> float:
    """Largest (L-ImgCoT reasoning tokens - full-CoT tokens) over k = 1, 2 and the problems with more CoT lines
    than kept steps (where L-ImgCoT compresses at all); < 0 means fewer everywhere."""
    lines = np.asarray(m["cot_lines"], dtype=float)
    full = np.asarray(m["target_tokens"]["full_cot"], dtype=float)
    gaps = [(np.asarray(m["target_tokens"][f"l_imgcot_k{k}"], dtype=float) - full)[lines > k] for k in (1, 2)]
    gaps = np.concatenate(gaps)
    return float(np.max(gaps)) if gaps.size else float("nan")


# Every language model a paper claim compares; each has a learning check against the class prior.
MODELS = METHODS


def _skill(method: str):
    """Paired per-problem 0/1 answer error of ``method`` against the class prior (the most frequent training
    answer) on the test problems of the fewest CoT lines: the one-step arithmetic every method needs and can
    learn (a model without a chain of thought cannot compose several steps at this size, which is what the
    CoT claims measure on the long problems)."""

    def measure(m: Mapping[str, Any]):
        model = 1.0 - np.asarray(m["correct"][method]["test_short"], dtype=float)
        prior = 1.0 - np.asarray(m["prior_correct"]["test_short"], dtype=float)
        return skill_over_trivial(model, prior)

    return measure


def learned(*methods: str) -> tuple[str, ...]:
    """The learning checks of the LMs of ``methods`` and of the tokenizers whose codes they read."""
    tokenizers = {"learn_image_tokenizer" for m in methods if "imgcot" in m} | (
        {"learn_text_tokenizer"} if "text_ae" in methods else set()
    )
    return tuple(f"learn_{method}" for method in methods) + tuple(sorted(tokenizers))


def _tokenizer_skill(model: str, trivial: str):
    def measure(m: Mapping[str, Any]):
        return skill_over_trivial(m["tokenizers"][model], m["tokenizers"][trivial])

    return measure


def _latent_length_spread(m: Mapping[str, Any]) -> float:
    tokens = np.asarray(m["target_tokens"]["imgcot"], dtype=float)
    return float(np.max(np.abs(tokens - m["n_latent"])))


LEARNING = [
    learning_check(
        f"learn_{method}",
        f"the {method} LM",
        "the class prior (the most frequent training answer)",
        _skill(method),
        error="answer error on the one-step test problems",
    )
    for method in MODELS
] + [
    learning_check(
        "learn_image_tokenizer",
        "the image tokenizer (VQ-VAE of the rendered CoT)",
        "the mean training image",
        _tokenizer_skill("image_error", "image_mean_image_error"),
        error="reconstruction MSE on held-out renders",
    ),
    learning_check(
        "learn_text_tokenizer",
        "the text tokenizer (GRU autoencoder of the CoT tokens)",
        "the same decoder given another chain's codes",
        _tokenizer_skill("text_nll", "text_other_codes_nll"),
        error="token NLL of the held-out CoT reconstructed from its codes",
    ),
]

CLAIMS = [
    *LEARNING,
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
        "L-ImgCoT (k = 1 and 2) uses fewer reasoning tokens than the full CoT on every problem with more CoT lines "
        "than kept steps: largest per-problem difference < 0 (holds when n_latent is below the length of a step).",
        Test("<", 0.0),
        _token_margin,
    ),
    ClaimSpec(
        "imgcot_full_cot_beats_no_cot",
        "paper",
        f"Full textual CoT accuracy minus no-CoT accuracy on multi-step test problems (at least long_min_steps CoT "
        f"lines) > 0 (paired "
        f"bootstrap; {STAND_IN}).",
        Test(">", 0.0),
        _gain("full_cot", "no_cot", "test_long"),
        rests_on=learned("full_cot", "no_cot"),
    ),
    ClaimSpec(
        "imgcot_image_beats_text_latents",
        "paper",
        f"Same number of latent tokens: ImgCoT (image VQ codes) accuracy minus text-autoencoder latents accuracy > 0 "
        f"on test problems (paired bootstrap; {STAND_IN}).",
        Test(">", 0.0),
        _gain("imgcot", "text_ae"),
        rests_on=learned("imgcot", "text_ae"),
    ),
    ClaimSpec(
        "imgcot_image_latents_generalise",
        "paper",
        f"On held-out templates (unseen program structures): ImgCoT accuracy minus text-AE latents accuracy > 0 "
        f"(paired bootstrap; {STAND_IN}).",
        Test(">", 0.0),
        _gain("imgcot", "text_ae", "heldout"),
        rests_on=learned("imgcot", "text_ae"),
    ),
    ClaimSpec(
        "imgcot_loose_beats_imgcot",
        "paper",
        f"L-ImgCoT (latents + the 1 lowest-likelihood textual step) accuracy minus ImgCoT accuracy > 0 (paired "
        f"bootstrap; {STAND_IN}).",
        Test(">", 0.0),
        _gain("l_imgcot_k1", "imgcot"),
        rests_on=learned("l_imgcot_k1", "imgcot"),
    ),
    ClaimSpec(
        "imgcot_lowlik_selection_beats_random",
        "paper",
        f"Step selection ablation: L-ImgCoT keeping the lowest-likelihood step minus keeping a random step > 0 "
        f"(paired bootstrap; {STAND_IN}).",
        Test(">", 0.0),
        _gain("l_imgcot_k1", "l_imgcot_random_k1"),
        rests_on=learned("l_imgcot_k1", "l_imgcot_random_k1"),
    ),
    ClaimSpec(
        "imgcot_more_kept_steps_help",
        "paper",
        f"L-ImgCoT against the number of kept textual steps: keeping the 2 lowest-likelihood steps minus keeping "
        f"1, accuracy on the test problems with 3 or more CoT lines (where k = 2 still leaves a step latent) > 0 "
        f"(paired bootstrap; {STAND_IN}).",
        Test(">", 0.0),
        _gain("l_imgcot_k2", "l_imgcot_k1", "test_deep"),
        rests_on=learned("l_imgcot_k2", "l_imgcot_k1"),
    ),
    ClaimSpec(
        "imgcot_lowlik_selection_beats_first",
        "paper",
        f"Step selection ablation: L-ImgCoT keeping the lowest-likelihood step minus keeping the first step > 0 "
        f"(paired bootstrap; {STAND_IN}).",
        Test(">", 0.0),
        _gain("l_imgcot_k1", "l_imgcot_first_k1"),
        rests_on=learned("l_imgcot_k1", "l_imgcot_first_k1"),
    ),
]
