"""Batched generation and scoring with a KV cache, memoised on disk by (model sha256, prompt, settings).

Generation runs transformers' ``generate`` (past key values reused at every step) over left-padded batches.
Each completion is stored as one JSON file named by the sha256 of its key, so a rerun with the same model
file, prompt and settings reads it back instead of running the model; the key holds everything the output
depends on, so the memo can never return a stale answer. Within a batch, prompts are padded to a common
length: a prompt's completion is computed once, in whatever batch first asked for it, and reused after.
An optional :class:`LogitsHook` (e.g. a watermark) edits the next-token logits at every step and may add
per-row fields to each record; its ``key_fields`` enter the memo key.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

import torch
from transformers import LogitsProcessorList

from repro.data.language.model import LanguageModel
from repro.workflow.io import write_json

CACHE_ENV = "REPRO_LANGUAGE_CACHE"
DEFAULT_CACHE = Path("data/language/cache")


@dataclass(frozen=True)
class GenerationSettings:
    """Decoding settings; ``temperature == 0`` is greedy (then ``seed`` and ``top_p`` do not matter)."""

    max_new_tokens: int = 48
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    batch_size: int = 8

    def key_fields(self) -> dict:
        """The settings the output depends on (the batch size only changes padding, not the memo key)."""
        fields = asdict(self)
        fields.pop("batch_size")
        if self.temperature == 0:
            fields.pop("seed"), fields.pop("top_p")
        return fields


class LogitsHook(Protocol):
    """A transformers logits processor that also names itself for the memo and reports per-row extras.

    ``begin(batch)`` is called before each batch; ``__call__(input_ids, scores)`` returns the edited scores at
    every step (it sees the model's raw logits when sampling at temperature 1 with top_p 1); ``extras(row,
    length)`` gives JSON-able fields of one row of the last batch, ``length`` being its kept token count.
    """

    def key_fields(self) -> dict: ...

    def begin(self, batch: int) -> None: ...

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor: ...

    def extras(self, row: int, length: int) -> dict: ...


def cache_folder(configured: str | os.PathLike | None = None) -> Path:
    """``$REPRO_LANGUAGE_CACHE`` when set, else the configured folder, else data/language/cache."""
    return Path(os.environ.get(CACHE_ENV) or configured or DEFAULT_CACHE)


def cache_key(model_sha256: str, prompt: str, settings: GenerationSettings, hook: LogitsHook | None = None) -> str:
    """sha256 of the model file's digest, the exact prompt text, the decoding settings and the hook's key."""
    fields = {"model": model_sha256, "prompt": prompt, "settings": settings.key_fields()}
    if hook is not None:
        fields["hook"] = hook.key_fields()
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def _entry(cache: Path, key: str) -> Path:
    return cache / key[:2] / f"{key}.json"


def _run_batch(
    lm: LanguageModel, prompts: Sequence[str], settings: GenerationSettings, hook: LogitsHook | None = None
) -> list[dict]:
    tok = lm.tokenizer
    enc = tok(list(prompts), return_tensors="pt", padding=True, add_special_tokens=False)
    sample = settings.temperature > 0
    if sample:
        torch.manual_seed(settings.seed)
    kwargs = {"do_sample": sample}
    if sample:
        kwargs |= {"temperature": settings.temperature, "top_p": settings.top_p, "top_k": 0}
    if hook is not None:
        hook.begin(len(prompts))
        kwargs["logits_processor"] = LogitsProcessorList([hook])
    with torch.no_grad():
        out = lm.model.generate(
            **enc,
            max_new_tokens=settings.max_new_tokens,
            pad_token_id=tok.pad_token_id,
            eos_token_id=tok.eos_token_id,
            use_cache=True,
            **kwargs,
        )
    new = out[:, enc.input_ids.shape[1] :]
    results = []
    for i, row in enumerate(new.tolist()):
        if tok.eos_token_id in row:
            row = row[: row.index(tok.eos_token_id)]
        extras = hook.extras(i, len(row)) if hook is not None else {}
        results.append({"tokens": row, "text": tok.decode(row, skip_special_tokens=True)} | extras)
    return results


def generate(
    lm: LanguageModel,
    prompts: Sequence[str],
    settings: GenerationSettings = GenerationSettings(),
    cache: str | os.PathLike | None = None,
    hook: LogitsHook | None = None,
) -> list[dict]:
    """Completions of ``prompts`` as ``{"text", "tokens", "cached"}`` (plus the hook's extras); memo hits skip
    the model entirely."""
    folder = cache_folder(cache)
    keys = [cache_key(lm.sha256, p, settings, hook) for p in prompts]
    results: dict[str, dict] = {}
    for key in set(keys):
        path = _entry(folder, key)
        if path.is_file():
            results[key] = json.loads(path.read_text()) | {"cached": True}
    todo = [(k, p) for k, p in dict(zip(keys, prompts)).items() if k not in results]
    for start in range(0, len(todo), settings.batch_size):
        chunk = todo[start : start + settings.batch_size]
        for (key, prompt), done in zip(chunk, _run_batch(lm, [p for _, p in chunk], settings, hook)):
            record = {"model": lm.sha256, "prompt": prompt, "settings": settings.key_fields()} | done
            if hook is not None:
                record["hook"] = hook.key_fields()
            write_json(_entry(folder, key), record)
            results[key] = record | {"cached": False}
    return [results[k] for k in keys]


def sequence_logprobs(lm: LanguageModel, contexts: Sequence[str], continuations: Sequence[str]) -> list[list[float]]:
    """Per-token log-probabilities of each continuation given its context (one teacher-forced pass each)."""
    tok = lm.tokenizer
    out = []
    with torch.no_grad():
        for context, continuation in zip(contexts, continuations):
            ctx = tok(context, add_special_tokens=False).input_ids
            cont = tok(continuation, add_special_tokens=False).input_ids
            ids = torch.tensor([ctx + cont])
            logp = torch.log_softmax(lm.model(ids).logits[0, :-1].float(), dim=-1)
            targets = ids[0, 1:]
            picked = logp.gather(1, targets[:, None])[:, 0][len(ctx) - 1 :]
            out.append(picked.tolist())
    return out
