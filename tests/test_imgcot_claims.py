"""ImgCoT's paper claims fail on the counterfactuals the paper denies."""

from __future__ import annotations

import numpy as np
import pytest

from repro.papers.imgcot.claims import CLAIMS
from repro.reporting.claims import verdict

METHODS = ("full_cot", "no_cot", "text_ae", "imgcot", "l_imgcot_k1", "l_imgcot_random_k1")
ACCURACY = {
    "full_cot": 0.9,
    "no_cot": 0.3,
    "text_ae": 0.4,
    "imgcot": 0.6,
    "l_imgcot_k1": 0.8,
    "l_imgcot_random_k1": 0.6,
}


def correct(share: float, n: int = 100) -> list[float]:
    return [1.0 if i < share * n else 0.0 for i in range(n)]


def metrics(**accuracy) -> dict:
    acc = ACCURACY | accuracy
    splits = ("test", "heldout", "test_long")
    return {
        "correct": {m: {s: correct(acc[m]) for s in splits} for m in METHODS},
        "target_tokens": {"full_cot": [16.0, 24.0], "l_imgcot_k1": [12.0, 12.0], "imgcot": [4.0, 4.0]},
        "n_latent": 4,
        "render_fit_share": 1.0,
    }


def test_every_paper_claim_passes_when_the_paper_is_right():
    for claim in (c.id for c in CLAIMS if c.kind == "paper"):
        assert verdict(CLAIMS, claim, metrics()) == "pass", claim


@pytest.mark.counterfactual("imgcot", "imgcot_full_cot_beats_no_cot")
def test_cot_claim_fails_when_cot_does_not_help():
    assert verdict(CLAIMS, "imgcot_full_cot_beats_no_cot", metrics(full_cot=0.3)) == "fails"


@pytest.mark.counterfactual("imgcot", "imgcot_image_beats_text_latents")
def test_image_claim_fails_with_the_text_latents_numbers():
    assert verdict(CLAIMS, "imgcot_image_beats_text_latents", metrics(imgcot=0.4)) == "fails"


@pytest.mark.counterfactual("imgcot", "imgcot_image_latents_generalise")
def test_generalisation_claim_fails_when_image_latents_are_worse():
    assert verdict(CLAIMS, "imgcot_image_latents_generalise", metrics(imgcot=0.35)) == "fails"


@pytest.mark.counterfactual("imgcot", "imgcot_loose_beats_imgcot")
def test_loose_claim_fails_when_kept_steps_do_not_help():
    assert verdict(CLAIMS, "imgcot_loose_beats_imgcot", metrics(l_imgcot_k1=0.6)) == "fails"


@pytest.mark.counterfactual("imgcot", "imgcot_lowlik_selection_beats_random")
def test_selection_claim_fails_with_random_steps_in_its_place():
    assert verdict(CLAIMS, "imgcot_lowlik_selection_beats_random", metrics(l_imgcot_k1=0.6)) == "fails"


def test_token_check_fails_when_a_loose_chain_is_as_long_as_the_full_one():
    m = metrics()
    m["target_tokens"]["l_imgcot_k1"] = [12.0, 24.0]
    assert verdict(CLAIMS, "imgcot_loose_fewer_tokens_than_full_cot", m) == "fails"
    assert np.isfinite(CLAIMS[0].measure(m))
