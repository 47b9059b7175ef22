"""ImgCoT's SmolLM2 path on a handful of GSM-style problems with a tiny GGUF LM: the LM stays frozen, the
projector learns, answers are scored."""

from __future__ import annotations

import torch
from test_language_corpora import write_layout
from test_language_model import tiny  # noqa: F401 - the tiny GGUF model fixture

from repro.data.language.model import load_gguf_model
from repro.papers.imgcot import pretrained

CFG = {
    "data_seed": 0,
    "n_train": 4,
    "n_test": 2,
    "image": {"height": 32, "width": 128, "max_font": 12},
    "latent": {"n_latent": 2, "codebook": 8, "dim": 4},
    "tokenizer": {"steps": 2, "batch": 4, "lr": 0.01},
    "projector": {"steps": 3, "lr": 0.01},
    "generator": {"steps": 3, "lr": 0.01},
    "max_new_tokens": 2,
}


def test_projector_trains_on_a_frozen_lm(tiny, tmp_path):  # noqa: F811
    lm = load_gguf_model(tiny[0])
    before = {k: v.clone() for k, v in lm.model.state_dict().items()}
    result = pretrained.run(lm, write_layout(tmp_path), CFG, seed=0)
    assert result["n_test"] == 2 and set(result["accuracy"]) == {"no_cot", "imgcot"}
    assert all(0.0 <= a <= 1.0 for a in result["accuracy"].values())
    assert all(torch.equal(before[k], v) for k, v in lm.model.state_dict().items())
    assert result["reasoning_tokens"]["imgcot"] == 2
