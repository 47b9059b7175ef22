"""Readers of MovieLens-100k (RecBole atomic files) and Amazon 2018 5-core JSON, on tiny files in the real layout."""

import gzip
import json

import numpy as np
import pytest

from repro.papers.syngr import benchmark
from repro.papers.syngr.readers import ML_DIR, k_core, read_amazon, read_movielens
from repro.workflow.io import InputError

ITEMS = (
    "item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq\n"
    "1\tToy Story\t1995\tAnimation Children's Comedy\n"
    "2\tGoldenEye\t1995\tAction Adventure Thriller\n"
    "3\tOld Film\tunkonwn\tDrama\n"
)
INTER = (
    "user_id:token\titem_id:token\trating:float\ttimestamp:float\n"
    "7\t2\t3\t300\n7\t1\t5\t100\n7\t3\t4\t200\n8\t3\t1\t50\n8\t1\t2\t60\n"
)


def movielens(tmp_path, items=ITEMS, inter=INTER):
    base = tmp_path / ML_DIR
    base.mkdir(parents=True)
    (base / "ml-100k.item").write_text(items)
    (base / "ml-100k.inter").write_text(inter)
    return tmp_path


def test_movielens_sequences_in_time_order_and_genre_decade_modality(tmp_path):
    data = read_movielens(movielens(tmp_path), max_length=10)
    assert data.texts == ["Toy Story", "GoldenEye", "Old Film"]
    assert [s.tolist() for s in data.sequences] == [[0, 2, 1], [2, 0]]
    assert data.second.shape == (3, 7 + 2)  # 7 genres, decades 0 and 1990
    np.testing.assert_array_equal(data.second.sum(1), [4, 4, 2])
    assert [s.tolist() for s in read_movielens(tmp_path, max_length=2).sequences] == [[2, 1], [2, 0]]


@pytest.mark.parametrize(
    ("items", "inter", "problem"),
    [
        (ITEMS.replace("class:token_seq", "genre:token_seq"), INTER, "lacks columns"),
        (ITEMS, INTER + "9\t1\n", "fields"),
        (ITEMS, INTER.replace("\t300", "\tsoon"), "timestamp"),
    ],
)
def test_movielens_bad_inputs_are_named(tmp_path, items, inter, problem):
    with pytest.raises(InputError, match=problem):
        read_movielens(movielens(tmp_path, items, inter), 10)


def test_movielens_missing_file_is_named(tmp_path):
    with pytest.raises(InputError, match="ml-100k.item"):
        read_movielens(tmp_path, 10)


def write_lines(path, records):
    with gzip.open(path, "wt") as fh:
        fh.write("\n".join(json.dumps(r) for r in records))


def amazon(tmp_path, reviews=None):
    reviews = reviews or [
        {"reviewerID": f"u{u}", "asin": f"a{i}", "overall": 5.0, "unixReviewTime": 10 * i + u}
        for u in range(3)
        for i in range(3)
    ] + [{"reviewerID": "lonely", "asin": "a0", "overall": 4.0, "unixReviewTime": 1}]
    meta = [
        {"asin": f"a{i}", "title": f"Item {i}", "description": ["nice", "thing"], "category": ["Music", f"c{i}"]}
        for i in range(3)
    ]
    write_lines(tmp_path / "Musical_Instruments_5.json.gz", reviews)
    write_lines(tmp_path / "meta_Musical_Instruments.json.gz", meta)
    return {
        "kind": "amazon",
        "reviews": str(tmp_path / "Musical_Instruments_5.json.gz"),
        "meta": str(tmp_path / "meta_Musical_Instruments.json.gz"),
        "core": 3,
    }


def test_amazon_reader_applies_k_core_and_builds_both_modalities(tmp_path):
    data = read_amazon(amazon(tmp_path), max_length=50)
    assert len(data.sequences) == 3  # "lonely" has one review and is dropped by the 3-core filter
    assert all(s.tolist() == [0, 1, 2] for s in data.sequences)
    assert data.texts[1] == "Item 1 nice thing"
    assert data.second.shape == (3, 4) and np.all(data.second[:, 0] == 1)  # category:Music shared


def test_amazon_image_embeddings_are_joined_by_asin(tmp_path):
    spec = amazon(tmp_path)
    np.savez(tmp_path / "img.npz", asin=np.array(["a2", "a0", "a1"]), embedding=np.eye(3, dtype=np.float32))
    data = read_amazon(spec | {"image_embeddings": str(tmp_path / "img.npz")}, 50)
    np.testing.assert_array_equal(data.second, np.eye(3)[[1, 2, 0]])
    np.savez(tmp_path / "short.npz", asin=np.array(["a0"]), embedding=np.eye(1, dtype=np.float32))
    with pytest.raises(InputError, match="no embedding for 2 items"):
        read_amazon(spec | {"image_embeddings": str(tmp_path / "short.npz")}, 50)


def test_amazon_bad_inputs_are_named(tmp_path):
    spec = amazon(tmp_path, reviews=[{"reviewerID": "u", "asin": "a0"}])
    with pytest.raises(InputError, match="lacks reviewerID, asin or unixReviewTime"):
        read_amazon(spec, 50)
    (tmp_path / "broken.json").write_text('{"asin": "a0"\n')
    with pytest.raises(InputError, match="not JSON"):
        read_amazon(spec | {"reviews": str(tmp_path / "broken.json")}, 50)
    (tmp_path / "good").mkdir()
    good = amazon(tmp_path / "good")
    with pytest.raises(InputError, match="not found"):
        read_amazon(good | {"meta": str(tmp_path / "absent.json")}, 50)


def test_k_core_iterates_until_stable():
    events = [("u1", "a", 1), ("u1", "b", 2), ("u2", "a", 3), ("u2", "b", 4), ("u3", "a", 5)]
    assert k_core(events, 2) == events[:4]


def test_benchmark_file_round_trip_and_bad_index(tmp_path):
    text, image = np.ones((3, 2)), np.zeros((3, 4))
    codes = {k: np.zeros((3, 1), dtype=np.int64) for k in ("text", "image", "fused")}
    benchmark.write(tmp_path / "b.npz", text, image, [np.array([0, 1]), np.array([2, 1, 0])], codes)
    stored = benchmark.read(tmp_path / "b.npz")
    assert [s.tolist() for s in stored.sequences] == [[0, 1], [2, 1, 0]]
    benchmark.write(tmp_path / "bad.npz", text, image, [np.array([0, 5])], codes)
    with pytest.raises(InputError, match="disagree"):
        benchmark.read(tmp_path / "bad.npz")
