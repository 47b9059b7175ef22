"""The fast lock-step Llama runner against transformers on a tiny GGUF model: shared prefixes, ragged chunks,
forked and dropped rows, the tokenizer and chat template without transformers, bfloat16 matmuls."""

from __future__ import annotations

import torch
from test_language_model import tiny  # noqa: F401 - the tiny GGUF model fixture

from repro.data.language.fast import RowBatch, load_fast, prefill
from repro.data.language.model import load_gguf_model


def reference_last_logits(reference, ids: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return reference(torch.tensor([ids])).logits[0, -1]


def test_ragged_rows_over_two_prefixes_equal_full_forward_passes(tiny):  # noqa: F811
    path, reference = tiny
    model = load_fast(path)
    prefixes = [[5, 70, 9, 200, 33, 4, 17], [8, 8, 100]]
    tails = [[40, 41, 42, 43, 44, 45, 46], [50, 51], [60, 61, 62, 63, 64]]
    groups = [0, 0, 1]
    with torch.no_grad():
        batch = RowBatch(model, [prefill(model, p) for p in prefixes], groups, capacity=2)
        # Chunks of different lengths per step (one row idle in the middle step), the cache grows twice.
        steps = [[tails[0][:1], tails[1][:2], tails[2][:4]], [tails[0][1:6], [], tails[2][4:]], [tails[0][6:], [], []]]
        seen = {}
        for chunks in steps:
            for r, hidden in batch.feed(chunks).items():
                seen[r] = model.logits(hidden[None])[0]
    for r in range(3):
        expected = reference_last_logits(reference, prefixes[groups[r]] + tails[r])
        torch.testing.assert_close(seen[r], expected, rtol=1e-4, atol=1e-4)


def test_forked_and_dropped_rows_continue_their_own_dialogue(tiny):  # noqa: F811
    path, reference = tiny
    model = load_fast(path)
    prefix = [5, 70, 9]
    with torch.no_grad():
        batch = RowBatch(model, [prefill(model, prefix)], [0, 0])
        batch.feed([[11, 12, 13], [21]])
        batch.select([0, 0, 1])  # fork row 0
        out = batch.feed([[14], [15, 16], [22]])
        batch.select([2, 1])  # drop the first copy, keep the order by group
        last = batch.feed([[23], [17]])
    cases = [
        (out[0], prefix + [11, 12, 13, 14]),
        (out[1], prefix + [11, 12, 13, 15, 16]),
        (last[0], prefix + [21, 22, 23]),
        (last[1], prefix + [11, 12, 13, 15, 16, 17]),
    ]
    for hidden, ids in cases:
        torch.testing.assert_close(
            model.logits(hidden[None])[0], reference_last_logits(reference, ids), rtol=1e-4, atol=1e-4
        )


def test_every_token_hidden_states_and_restricted_logits(tiny):  # noqa: F811
    path, reference = tiny
    model = load_fast(path)
    with torch.no_grad():
        batch = RowBatch(model, [prefill(model, [5, 6])], [0])
        hidden = batch.feed([[7, 8, 9]], every=True)[0]
        full = reference(torch.tensor([[5, 6, 7, 8, 9]])).logits[0, 2:]
    torch.testing.assert_close(model.logits(hidden), full, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(model.logits(hidden, [3, 9]), full[:, [3, 9]], rtol=1e-4, atol=1e-4)


def test_tokenizer_and_chat_template_without_transformers_match_the_transformers_ones(tiny):  # noqa: F811
    fast, slow = load_fast(tiny[0]).tokenizer, load_gguf_model(tiny[0])
    for text in ("hello 42<|im_end|>", "<|im_start|>user\nhe hel 7<|im_end|>\n", "hé 0.5"):
        assert fast.encode(text) == slow.tokenizer(text, add_special_tokens=False).input_ids
        assert fast.decode(fast.encode(text)) == text
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
    assert fast.chat(messages) == slow.chat_prompt("hi", system="sys")


def test_bfloat16_matmuls_stay_close_to_float32(tiny):  # noqa: F811
    path, _ = tiny
    ids = [5, 70, 9, 200, 33, 4]
    out = {}
    for dtype in (torch.float32, torch.bfloat16):
        model = load_fast(path, dtype)
        assert model.layers[0]["qkv"].dtype == dtype and model.embed.dtype == torch.float32
        with torch.no_grad():
            out[dtype] = model.logits(RowBatch(model, [prefill(model, ids[:3])], [0]).feed([ids[3:]])[0][None])[0]
    assert float((out[torch.float32] - out[torch.bfloat16]).abs().max()) < 0.05 * float(out[torch.float32].abs().max())
