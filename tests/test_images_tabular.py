"""Tabular readers (shapiq's adult census and California housing files) on tiny files in the same layout."""

from __future__ import annotations

import numpy as np
import pytest

from repro.data import tabular
from repro.workflow.io import InputError

ADULT = (
    "age,workclass,fnlwgt,education,education-num,marital-status,occupation,relationship,race,sex,"
    "capital-gain,capital-loss,hours-per-week,native-country,class\n"
    "25,Private,226802.0,11th,7,Never-married,Machine-op-inspct,Own-child,Black,Male,0.0,0.0,40,United-States,<=50K\n"
    "38,Private,89814.0,HS-grad,9,Married-civ-spouse,Farming-fishing,Husband,White,Female,0.0,0.0,50,United-States,>50K\n"
    "40,?,1.0,HS-grad,9,Married-civ-spouse,?,Husband,White,Female,0.0,0.0,50,United-States,>50K.\n"
)


def write(folder, member, text):
    path = folder / member
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_adult_labels_groups_and_one_hot(tmp_path):
    write(tmp_path, tabular.ADULT_MEMBER, ADULT)
    data = tabular.read_adult(tmp_path)
    assert data.y.tolist() == [0, 1]  # the row with missing values is dropped
    assert data.attributes["sex"].tolist() == [1, 0]
    assert data.attributes["race"].tolist() == [0, 1]  # Black, White in sorted order
    assert data.x.shape[0] == 2 and "sex=Male" in data.feature_names
    np.testing.assert_array_equal(data.x[:, data.feature_names.index("age")], [25, 38])
    assert "sex=Male" not in tabular.read_adult(tmp_path, drop=("sex",)).feature_names


def test_bad_tables_are_named(tmp_path):
    write(tmp_path, tabular.ADULT_MEMBER, ADULT.replace(">50K\n", "rich\n", 1))
    with pytest.raises(InputError, match="adult_census.csv: class must be"):
        tabular.read_adult(tmp_path)
    write(tmp_path, tabular.CALIFORNIA_MEMBER, "MedInc,HouseAge\n1,2\n")
    with pytest.raises(InputError, match="california_housing.csv: lacks columns"):
        tabular.read_california(tmp_path)


def test_california_region(tmp_path):
    header = ",".join([*tabular.CALIFORNIA_FEATURES, "MedHouseVal"])
    write(
        tmp_path,
        tabular.CALIFORNIA_MEMBER,
        f"{header}\n8,41,7,1,322,2.5,37.88,-122.23,4.5\n8,41,7,1,322,2.5,34.0,-118.0,2.0\n",
    )
    data = tabular.read_california(tmp_path)
    assert data.attributes["north"].tolist() == [1, 0] and data.y.tolist() == [4.5, 2.0]
