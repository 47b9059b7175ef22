"""Readers of MovieLens-100k (RecBole's atomic files and the raw GroupLens release) and Amazon 2018 5-core JSON, on
files in the published layouts from the rehearsal's fixture writers (repro.fixtures.movielens, .amazon2018):
encodings, per-row checks, refused rows counted, and bad inputs named."""

import gzip
import json
import shutil

import numpy as np
import pytest

from repro.fixtures import amazon2018, movielens
from repro.papers.syngr import benchmark
from repro.papers.syngr.readers import k_core, read_amazon, read_movielens
from repro.workflow.io import InputError


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    root = tmp_path_factory.mktemp("real")
    movielens.write(root / "ml")
    amazon2018.write(root / "amazon")
    return root


@pytest.fixture
def root(written, tmp_path):
    shutil.copytree(written, tmp_path / "real")
    return tmp_path / "real"


def grouplens(root, **extra):
    return {"kind": "movielens", "source": "grouplens", "root": str(root / "ml/ml-100k")} | extra


def recbole(**extra):
    return {"kind": "movielens", "source": "recbole"} | extra


def test_both_movielens_layouts_give_the_same_benchmark_with_titles_decoded(root):
    raw = read_movielens(grouplens(root), None, max_length=50)
    atomic = read_movielens(recbole(), root / "ml", max_length=50)
    assert raw.texts == atomic.texts == list(movielens.TITLES)  # "Misérables, Les" from latin-1 and from UTF-8
    np.testing.assert_array_equal(raw.second, atomic.second)
    assert [s.tolist() for s in raw.sequences] == [s.tolist() for s in atomic.sequences]
    assert raw.report["ratings"] == atomic.report["ratings"] and raw.report["items"] == 20


def test_movielens_sequences_in_time_order_and_genre_decade_modality(root):
    data = read_movielens(grouplens(root), None, max_length=50)
    rows = [line.split("\t") for line in (root / "ml/ml-100k/u.data").read_text().splitlines()]
    first = sorted((int(t), int(i)) for u, i, _, t in rows if u == "1")
    assert data.sequences[0].tolist() == [i - 1 for _, i in first]
    assert [len(s) for s in read_movielens(grouplens(root), None, max_length=3).sequences] == [3] * movielens.USERS
    genres, decades = data.second[:, :-1], data.second.sum(1)
    assert np.all(decades >= 2) and np.all(data.second.max(1) == 1)
    assert genres.shape[0] == 20


def test_decoding_the_utf8_atomic_file_as_latin1_would_garble_titles(root):
    """The bug the reader fixes: RecBole's file is UTF-8, so latin-1 decoding would give 'MisÃ©rables'."""
    text = (root / "ml/recbole/dataset_example/ml-100k/ml-100k.item").read_bytes()
    assert "MisÃ©rables" in text.decode("latin-1") and "Misérables" in text.decode("utf-8")


@pytest.mark.parametrize(
    "file, edit, where",
    [
        ("u.data", lambda t: t + "1\t3\n", "2 fields, expected 4"),  # a truncated last row
        ("u.data", lambda t: t.replace("\t", "\tx", 1), "item x"),
        ("u.data", lambda t: t + "1\t2\t9\t874000000\n", "rating 9 outside"),
        ("u.data", lambda t: t + "99\t2\t3\t874000000\n", "user 99 is not in u.user"),
        ("u.item", lambda t: t.replace("|0|", "|2|", 1), "genre flag 2 outside"),
        ("u.user", lambda t: t.replace("|M|", "|X|", 1), "gender 'X'"),
    ],
)
def test_bad_rows_are_refused_counted_and_named(root, file, edit, where):
    path = root / "ml/ml-100k" / file
    path.write_text(edit(path.read_text(encoding="latin-1")), encoding="latin-1")
    data = read_movielens(grouplens(root, max_refused=0.5), None, 50)
    report = next(f for f in data.report["files"] if f["path"].endswith(file))
    assert report["refused"] == 1 and where in report["refused_first"][0]
    with pytest.raises(InputError, match=f"{file}: 1 of .* rows refused"):
        read_movielens(grouplens(root, max_refused=0.0), None, 50)


def test_movielens_structural_errors_are_named(root):
    atomic = root / "ml/recbole/dataset_example/ml-100k/ml-100k.item"
    atomic.write_text(atomic.read_text().replace("class:token_seq", "genre:token_seq"))
    with pytest.raises(InputError, match="header lacks columns"):
        read_movielens(recbole(), root / "ml", 50)
    (root / "ml/ml-100k/u.user").unlink()
    with pytest.raises(InputError, match="u.user: not found"):
        read_movielens(grouplens(root), None, 50)
    with pytest.raises(InputError, match="GroupLens ml-100k folder"):
        read_movielens(grouplens(root) | {"root": str(root / "nowhere")}, None, 50)
    (root / "ml/ml-100k/u.user").write_bytes(b"\xff\xfe")  # latin-1 reads any byte; UTF-8 atomic files do not
    atomic.write_bytes(b"item_id:token\xff\n")
    with pytest.raises(InputError, match="not utf-8 text"):
        read_movielens(recbole(), root / "ml", 50)


def amazon_spec(root, category="Musical_Instruments", **extra):
    folder = root / "amazon"
    return {
        "kind": "amazon",
        "reviews": str(folder / f"{category}_5.json.gz"),
        "meta": str(folder / f"meta_{category}.json.gz"),
    } | extra


def test_amazon_reader_builds_sequences_and_both_modalities(root):
    data = read_amazon(amazon_spec(root), max_length=50)
    assert len(data.texts) == amazon2018.ITEMS and len(data.sequences) == amazon2018.USERS
    assert data.texts[0].startswith("Musical Instruments item 0 \u2013")
    assert data.second.shape[0] == amazon2018.ITEMS and np.all(data.second.sum(1) >= 2)  # categories + brand
    assert [f["rows"] for f in data.report["files"]] == [data.report["ratings"], amazon2018.ITEMS]


def test_amazon_image_embeddings_are_joined_by_asin(root, tmp_path):
    spec = amazon_spec(root)
    asins = [f"BMU{i:06d}" for i in range(amazon2018.ITEMS)]
    np.savez(tmp_path / "img.npz", asin=np.array(asins[::-1]), embedding=np.eye(len(asins), dtype=np.float32))
    data = read_amazon(spec | {"image_embeddings": str(tmp_path / "img.npz")}, 50)
    np.testing.assert_array_equal(data.second, np.eye(len(asins))[::-1])
    np.savez(tmp_path / "short.npz", asin=np.array(asins[:1]), embedding=np.eye(1, dtype=np.float32))
    with pytest.raises(InputError, match=f"no embedding for {len(asins) - 1} items"):
        read_amazon(spec | {"image_embeddings": str(tmp_path / "short.npz")}, 50)


def test_amazon_bad_records_are_refused_and_counted(root):
    spec = amazon_spec(root)
    with gzip.open(spec["reviews"], "rt", encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    lines += [
        '{"reviewerID": "A1", "asin": "BMU000001"}',
        '{"reviewerID": "A2", "asin": "BMU0',
        json.dumps({"reviewerID": "A3", "asin": "BMU000002", "unixReviewTime": "soon"}),
    ]
    with gzip.open(spec["reviews"], "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    data = read_amazon(spec | {"max_refused": 0.05}, 50)
    report = data.report["files"][0]
    assert report["refused"] == 3
    assert [r.split(":")[0] for r in report["refused_first"]] == [
        f"line {len(lines) - 2}",
        f"line {len(lines) - 1}",
        "reviewer A3",
    ]
    with pytest.raises(InputError, match="3 of .* records refused|rows refused"):
        read_amazon(spec | {"max_refused": 0.0}, 50)


def test_amazon_missing_files_are_named(root):
    with pytest.raises(InputError, match="absent.json.gz: not found"):
        read_amazon(amazon_spec(root) | {"meta": str(root / "absent.json.gz")}, 50)


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


@pytest.mark.e2e
def test_replacing_one_amazon_file_reruns_exactly_its_downstream_jobs(tmp_path):
    """A finished paper-scale run on Amazon files in the published layout, one review file replaced (new
    content): the items stage, the real benchmarks' training and what follows rerun; the synthetic ones do not."""
    import yaml
    from workflow_tools import copy_workflow, scheduled_rules, snakemake

    work = copy_workflow(tmp_path / "wf")
    amazon2018.write(work / "userdata" / "amazon")
    real = {
        name: {
            "reviews": f"userdata/amazon/{category}_5.json.gz",
            "meta": f"userdata/amazon/meta_{category}.json.gz",
        }
        for name, category in zip(("instruments", "arts", "games"), amazon2018.CATEGORIES, strict=True)
    }
    section = {
        "real": real,
        "synthetic": {"items": 40, "users": 60, "min_length": 5, "max_length": 6},
        "codes": {"levels": 1, "codebook": 4, "iterations": 3},
        "model": {"d": 16, "heads": 2, "layers": 1, "ff": 32},
        "train": {"epochs": 1, "batch": 200, "history": 3},
        "variants": {v: ["concat"] for v in ("instruments", "arts", "games", "synthetic_on", "synthetic_off")},
        "seeds": [0],
        "eval": {"beams": 10},
    }
    (work / "amazon-rerun.yaml").write_text(yaml.safe_dump({"papers": {"syngr": section}}))
    args = ("syngr", "--cores", "2", "--configfile", "config/full.yaml", "amazon-rerun.yaml")
    snakemake(work, *args)
    assert scheduled_rules(work, *args) == {}, "a finished run leaves nothing to do"
    path = work / "userdata/amazon/Video_Games_5.json.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines[:-1]) + "\n")
    expected = {"syngr_items": 1, "syngr_train": 3, "syngr_evaluate": 1, "syngr_figures": 1}
    assert scheduled_rules(work, *args) == expected | {"syngr": 1, "provenance": 1}
