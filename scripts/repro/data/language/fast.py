"""A small pure-torch Llama runner for many short, branching dialogues at once (constrained decoding).

:mod:`.model` runs a GGUF file through transformers, which is right for free generation of a few prompts but
costs about 4 CPU-seconds of import and pads every row of a batch to the longest chunk. An agent that runs
dozens of dialogues in lock-step feeds each row a different number of tokens per step (a forced piece of
grammar, a tool's reply, one chosen token), so this module packs the step's tokens flat for the linear
layers (no padding there), keeps one key/value cache per row written at that row's own length, and shares
the key/values of a common system prompt (a *prefix*) between the rows that start with it. It needs torch,
``gguf`` (dequantisation, through :mod:`.gguf_reader`), ``tokenizers`` and ``jinja2`` only.

The arithmetic is the Llama block of transformers' ``LlamaForCausalLM`` (RMSNorm, rotary embeddings with
the rotate-half convention after :func:`.model.unpermute_rope`, grouped-query attention, SwiGLU), in float32;
tests/test_language_fast.py checks its logits against transformers on a tiny GGUF model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers

from repro.data.language.gguf_reader import CONTROL, LAYER_NAMES, GGUFFile, read_gguf, unpermute_rope
from repro.workflow.io import InputError, sha256


@dataclass(frozen=True)
class LlamaShape:
    vocab: int
    hidden: int
    ffn: int
    layers: int
    heads: int
    kv_heads: int
    eps: float
    rope_theta: float

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


@dataclass
class FastTokenizer:
    """The GGUF file's byte-level BPE (as :func:`.model.build_tokenizer` builds it), control tokens kept
    whole, and its chat template rendered with jinja2."""

    backend: Tokenizer
    chat_template: str
    eos_id: int
    special: dict[str, int]

    def encode(self, text: str) -> list[int]:
        return self.backend.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int]) -> str:
        return self.backend.decode(ids, skip_special_tokens=False)

    def chat(self, messages: list[dict], add_generation_prompt: bool = True) -> str:
        """``messages`` in the model's own chat template (transformers renders it the same way)."""
        return _template(self.chat_template).render(messages=messages, add_generation_prompt=add_generation_prompt)


@lru_cache(maxsize=4)
def _template(source: str):
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    return ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True).from_string(source)


def fast_tokenizer(meta: dict) -> FastTokenizer:
    tokens = meta["tokenizer.ggml.tokens"]
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    backend = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges, fuse_unk=False))
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    backend.decoder = decoders.ByteLevel()
    special = {t: i for i, (t, kind) in enumerate(zip(tokens, meta["tokenizer.ggml.token_type"])) if kind == CONTROL}
    backend.add_special_tokens(list(special))
    return FastTokenizer(backend, meta.get("tokenizer.chat_template", ""), meta["tokenizer.ggml.eos_token_id"], special)


@dataclass
class FastLlama:
    """Weights (fused q/k/v and gate/up projections), shape, tokenizer and the sha256 of the file."""

    shape: LlamaShape
    embed: torch.Tensor
    norm: torch.Tensor
    layers: list[dict[str, torch.Tensor]]
    tokenizer: FastTokenizer
    sha256: str
    dtype: torch.dtype = torch.float32
    inv_freq: torch.Tensor = field(init=False)

    def __post_init__(self) -> None:
        d = self.shape.head_dim
        self.inv_freq = 1.0 / (self.shape.rope_theta ** (torch.arange(0, d, 2, dtype=torch.float32) / d))

    def linear(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        """``x @ weight.T`` in the runner's matmul dtype (weights are stored in it), returned as float32."""
        return (x.to(self.dtype) @ weight.T).float() if self.dtype != torch.float32 else x @ weight.T

    def with_dtype(self, dtype: torch.dtype) -> FastLlama:
        """The same model with its four projection matrices per layer in ``dtype`` (bfloat16 matmuls are
        about 2.5x faster than float32 on CPUs with AVX512-BF16, 4-7x slower on AVX2-only ones); norms,
        attention, softmax, the residual stream and the output embedding stay float32."""
        big = ("qkv", "o", "gate_up", "down")
        layers = [{k: (v.to(dtype) if k in big else v) for k, v in w.items()} for w in self.layers]
        return FastLlama(self.shape, self.embed, self.norm, layers, self.tokenizer, self.sha256, dtype)

    def logits(self, hidden: torch.Tensor, ids: list[int] | torch.Tensor | None = None) -> torch.Tensor:
        """Next-token logits of final hidden states ``[n, D]``, over the vocabulary or only over ``ids``."""
        table = self.embed if ids is None else self.embed[torch.as_tensor(ids, dtype=torch.long)]
        return hidden @ table.T

    def rope(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """Rotary embedding of ``x [n, heads, d]`` at integer ``positions [n]`` (rotate-half convention)."""
        freqs = positions.to(torch.float32)[:, None] * self.inv_freq[None, :]
        emb = torch.cat([freqs, freqs], dim=-1)
        cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
        half = x.shape[-1] // 2
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos + rotated * sin


def _rms(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def shape_of(meta: dict, path: Path) -> LlamaShape:
    if meta.get("general.architecture") != "llama":
        raise InputError(path, f"architecture {meta.get('general.architecture')!r} is not llama")
    p = "llama."
    try:
        return LlamaShape(
            vocab=len(meta["tokenizer.ggml.tokens"]),
            hidden=meta[p + "embedding_length"],
            ffn=meta[p + "feed_forward_length"],
            layers=meta[p + "block_count"],
            heads=meta[p + "attention.head_count"],
            kv_heads=meta[p + "attention.head_count_kv"],
            eps=float(meta[p + "attention.layer_norm_rms_epsilon"]),
            rope_theta=float(meta[p + "rope.freq_base"]),
        )
    except KeyError as err:
        raise InputError(path, f"GGUF metadata lacks {err}") from err


def _tensor(gguf: GGUFFile, name: str) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(gguf.array(name)))


@lru_cache(maxsize=2)
def load_fast(path: str | Path, dtype: torch.dtype = torch.float32) -> FastLlama:
    """A llama GGUF file as a :class:`FastLlama` (tied output embedding) whose projection matrices are kept in
    ``dtype`` (see :meth:`FastLlama.with_dtype`), cached per process."""
    path = Path(path)
    gguf = read_gguf(path)
    shape = shape_of(gguf.metadata, path)
    if "output.weight" in gguf.tensors:
        raise InputError(path, "untied output embeddings are not supported by the fast runner")
    layers = []
    for i in range(shape.layers):
        w = {}
        for src in LAYER_NAMES:
            name = f"blk.{i}.{src}"
            if name not in gguf.tensors:
                raise InputError(path, f"GGUF file lacks tensor {name}")
            array = gguf.array(name)
            if src == "attn_q.weight":
                array = unpermute_rope(array, shape.heads)
            elif src == "attn_k.weight":
                array = unpermute_rope(array, shape.kv_heads)
            w[src] = torch.from_numpy(np.ascontiguousarray(array))
        layers.append(
            {
                "attn_norm": w["attn_norm.weight"],
                "ffn_norm": w["ffn_norm.weight"],
                "qkv": torch.cat([w["attn_q.weight"], w["attn_k.weight"], w["attn_v.weight"]]).to(dtype),
                "o": w["attn_output.weight"].to(dtype),
                "gate_up": torch.cat([w["ffn_gate.weight"], w["ffn_up.weight"]]).to(dtype),
                "down": w["ffn_down.weight"].to(dtype),
            }
        )
    return FastLlama(
        shape,
        _tensor(gguf, "token_embd.weight"),
        _tensor(gguf, "output_norm.weight"),
        layers,
        fast_tokenizer(gguf.metadata),
        sha256(path),
        dtype,
    )


@dataclass
class Prefix:
    """Key/values of a shared prompt: per layer ``[kv_heads, length, head_dim]``."""

    keys: list[torch.Tensor]
    values: list[torch.Tensor]

    @property
    def length(self) -> int:
        return int(self.keys[0].shape[1]) if self.keys else 0


class RowBatch:
    """Rows that each continue one of the ``prefixes``: a key/value cache per row, fed ragged chunks.

    ``feed(chunks)`` appends ``chunks[r]`` (a list of token ids, possibly empty) to row ``r`` and returns the
    final hidden state after the last token of every row with a non-empty chunk. Rows keep their prefix
    group (``groups[r]``); ``select(index)`` keeps, drops or duplicates rows (fork a dialogue, drop finished
    ones). Within a step, a row's tokens attend to its prefix, its cache and its own earlier tokens only.
    """

    def __init__(self, model: FastLlama, prefixes: list[Prefix], groups: list[int], capacity: int = 64) -> None:
        s = model.shape
        self.model, self.prefixes = model, prefixes
        self.groups = torch.as_tensor(groups, dtype=torch.long)
        self.n = torch.zeros(len(groups), dtype=torch.long)
        self.capacity = capacity
        self.keys = [torch.zeros(len(groups), s.kv_heads, self.capacity, s.head_dim) for _ in model.layers]
        self.values = [torch.zeros_like(k) for k in self.keys]

    @property
    def rows(self) -> int:
        return len(self.groups)

    def select(self, index: list[int]) -> None:
        idx = torch.as_tensor(index, dtype=torch.long)
        order = torch.argsort(self.groups[idx], stable=True)
        if not torch.equal(order, torch.arange(len(idx))):
            raise ValueError("rows must stay sorted by prefix group")
        self.groups, self.n = self.groups[idx], self.n[idx]
        self.keys = [k[idx] for k in self.keys]
        self.values = [v[idx] for v in self.values]

    def _grow(self, need: int) -> None:
        if need <= self.capacity:
            return
        cap = max(need, 2 * self.capacity)
        pad = cap - self.capacity
        self.keys = [torch.nn.functional.pad(k, (0, 0, 0, pad)) for k in self.keys]
        self.values = [torch.nn.functional.pad(v, (0, 0, 0, pad)) for v in self.values]
        self.capacity = cap

    def feed(self, chunks: list[list[int]], every: bool = False) -> dict[int, torch.Tensor]:
        """Append ``chunks[r]`` to row ``r``; the final hidden state after each row's last token (``[D]``),
        or after each of its tokens (``[len, D]``) when ``every``."""
        if len(chunks) != self.rows:
            raise ValueError(f"{len(chunks)} chunks for {self.rows} rows")
        m, s = self.model, self.model.shape
        lengths = torch.as_tensor([len(c) for c in chunks], dtype=torch.long)
        live = torch.nonzero(lengths).flatten()
        if live.numel() == 0:
            return {}
        self._grow(int((self.n + lengths).max()))
        total = int(torch.max(self.n + lengths))
        ids = torch.as_tensor([t for c in chunks for t in c], dtype=torch.long)
        row = torch.repeat_interleave(torch.arange(self.rows), lengths)
        offset = torch.cumsum(lengths, 0) - lengths
        j = torch.arange(len(ids)) - offset[row]
        slot = self.n[row] + j
        prefix_len = torch.as_tensor([p.length for p in self.prefixes], dtype=torch.long)
        positions = prefix_len[self.groups[row]] + slot
        # Tokens are sorted by row and rows by prefix group: each group's tokens are one slice.
        token_bounds = torch.searchsorted(self.groups[row], torch.arange(len(self.prefixes) + 1)).tolist()
        passes = _own_passes(lengths, row, j, slot, total)
        x = m.embed[ids]
        for layer, w in enumerate(m.layers):
            h = _rms(x, w["attn_norm"], s.eps)
            qkv = m.linear(h, w["qkv"])
            hd = s.heads * s.head_dim
            q = qkv[:, :hd].view(-1, s.heads, s.head_dim)
            k = qkv[:, hd : hd + s.kv_heads * s.head_dim].view(-1, s.kv_heads, s.head_dim)
            v = qkv[:, hd + s.kv_heads * s.head_dim :].view(-1, s.kv_heads, s.head_dim)
            q, k = m.rope(q, positions), m.rope(k, positions)
            self.keys[layer][row, :, slot] = k
            self.values[layer][row, :, slot] = v
            q = (q / math.sqrt(s.head_dim)).view(-1, s.kv_heads, s.heads // s.kv_heads, s.head_dim)
            pre = _prefix_part(q, self.prefixes, layer, token_bounds)
            own = _own_part(q, self.keys[layer], self.values[layer], passes)
            x = x + m.linear(_merge(pre, own).reshape(-1, hd), w["o"])
            h = _rms(x, w["ffn_norm"], s.eps)
            gate, up = m.linear(h, w["gate_up"]).chunk(2, dim=-1)
            x = x + m.linear(torch.nn.functional.silu(gate) * up, w["down"])
        self.n = self.n + lengths
        if every:
            final = _rms(x, m.norm, s.eps)
            return {int(r): final[offset[r] : offset[r] + lengths[r]] for r in live.tolist()}
        last = offset + lengths - 1
        final = _rms(x[last[live]], m.norm, s.eps)
        return {int(r): final[i] for i, r in enumerate(live.tolist())}


# Partial attention over one set of keys: (log-sum-exp of the scores, softmax-weighted values) per query,
# merged across the prefix and the row's own cache as in blockwise (flash) attention.
Partial = tuple[torch.Tensor, torch.Tensor]
SHORT = 4  # query positions of the first pass over every row; longer chunks get a second pass over their rows


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None) -> Partial:
    """(output, logsumexp) of softmax attention, ``q [B, h, L, d]`` (already scaled) on ``k, v [B, h, S, d]``."""
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        q, k, v, 0.0, False, attn_mask=mask, scale=1.0
    )
    return lse, out


def _prefix_part(q: torch.Tensor, prefixes: list[Prefix], layer: int, bounds: list[int]) -> Partial:
    """Attention of every token ``q [N, kvh, g, d]`` to its group's shared prefix (no padding: one call with
    all the group's tokens as queries of each key/value head)."""
    n, kvh, g, d = q.shape
    lse, out = torch.full((n, kvh, g), float("-inf")), torch.zeros(n, kvh, g, d)
    for i, prefix in enumerate(prefixes):
        a, b = bounds[i], bounds[i + 1]
        if a == b or not prefix.length:
            continue
        qg = q[a:b].permute(1, 0, 2, 3).reshape(1, kvh, -1, d)
        part_lse, part = _attend(qg, prefix.keys[layer][None], prefix.values[layer][None])
        lse[a:b] = part_lse.view(kvh, b - a, g).permute(1, 0, 2)
        out[a:b] = part.view(kvh, b - a, g, d).permute(1, 0, 2, 3)
    return lse, out


def _own_passes(lengths: torch.Tensor, row: torch.Tensor, j: torch.Tensor, slot: torch.Tensor, total: int) -> list:
    """Padded layouts of the step's queries for attention to the rows' own caches: a first pass over every
    row for positions below ``SHORT``, a second over the rows with longer chunks (so that one long chunk
    does not pad every row)."""
    out = []
    width = int(lengths.max())
    for lo, hi in ((0, min(width, SHORT)), (SHORT, width)):
        if hi <= lo:
            continue
        sel = (j >= lo) & (j < hi)
        rows = torch.unique(row[sel])
        local = torch.full((len(lengths),), -1, dtype=torch.long)
        local[rows] = torch.arange(len(rows))
        query_slot = torch.full((len(rows), hi - lo), -1, dtype=torch.long)
        query_slot[local[row[sel]], j[sel] - lo] = slot[sel]
        mask = torch.zeros(len(rows), hi - lo, total)
        # A padded query keeps one key so that its (discarded) softmax stays finite.
        mask.masked_fill_(torch.arange(total)[None, None, :] > query_slot.clamp(min=0)[:, :, None], float("-inf"))
        every = len(rows) == len(lengths)
        out.append((torch.nonzero(sel).flatten(), None if every else rows, local[row[sel]], j[sel] - lo, mask))
    return out


def _own_part(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, passes: list) -> Partial:
    n, kvh, g, d = q.shape
    lse, out = torch.empty(n, kvh, g), torch.empty(n, kvh, g, d)
    for tokens, rows, r, c, mask in passes:
        span, width = mask.shape[-1], mask.shape[1]
        k = keys[:, :, :span] if rows is None else keys[rows, :, :span]
        v = values[:, :, :span] if rows is None else values[rows, :, :span]
        padded = torch.zeros(k.shape[0], width, kvh, g, d)
        padded[r, c] = q[tokens]
        padded = padded.permute(0, 2, 3, 1, 4).reshape(k.shape[0], kvh, g * width, d)
        full_mask = mask[:, None, None].expand(-1, 1, g, -1, -1).reshape(k.shape[0], 1, g * width, span)
        part_lse, part = _attend(padded, k, v, full_mask)
        lse[tokens] = part_lse.view(-1, kvh, g, width).permute(0, 3, 1, 2)[r, c]
        out[tokens] = part.view(-1, kvh, g, width, d).permute(0, 3, 1, 2, 4)[r, c]
    return lse, out


def _merge(a: Partial, b: Partial) -> torch.Tensor:
    lse = torch.logaddexp(a[0], b[0])
    return a[1] * torch.exp(a[0] - lse)[..., None] + b[1] * torch.exp(b[0] - lse)[..., None]


def prefill(model: FastLlama, ids: list[int]) -> Prefix:
    """Key/values of ``ids`` read once, shared afterwards by every row that starts with them."""
    batch = RowBatch(model, [Prefix([], [])], [0], capacity=len(ids))
    with torch.no_grad():
        batch.feed([list(ids)])
    n = len(ids)
    return Prefix([k[0, :, :n].clone() for k in batch.keys], [v[0, :, :n].clone() for v in batch.values])
