"""Shipped ATLAS split lists and the release-date rule that rebuilds them."""

from __future__ import annotations

import pandas as pd

from repro.data.atlas.splits import read_split, split_by_release_date


def test_shipped_lists_have_published_sizes_and_dates(repo):
    val = pd.read_csv(repo / "resources/atlas/atlas_val.csv")
    test = pd.read_csv(repo / "resources/atlas/atlas_test.csv")
    assert len(val) == 39 and len(test) == 82
    assert not set(val["name"]) & set(test["name"])
    rebuilt = split_by_release_date(pd.concat([val, test])[["name", "release_date"]])
    assert rebuilt["val"] == sorted(val["name"]) and rebuilt["test"] == sorted(test["name"])
    assert rebuilt["train"] == []
    assert test["seqlen"].min() == 39 and test["seqlen"].max() == 724


def test_release_date_rule_on_boundaries():
    meta = pd.DataFrame(
        {
            "name": ["a", "b", "c", "d", "e"],
            "release_date": ["2018-04-25", "2018-05-01", "2018-05-23", "2019-05-01", "2022-04-01"],
        }
    )
    assert split_by_release_date(meta) == {"train": ["a"], "val": ["c"], "test": ["d"]}


def test_read_split_names_the_file_on_bad_input(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("chain\n1abc_A\n")
    import pytest

    from repro.workflow.io import InputError

    with pytest.raises(InputError, match="x.csv: split list has no 'name' column"):
        read_split(bad)
