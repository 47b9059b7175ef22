"""The canonical mesh store: the data stage writes it, readers name the store and the sample on bad input."""

import json
from types import SimpleNamespace

import numpy as np
import pytest
import zarr

from repro.papers.geo_newf import data
from repro.papers.geo_newf.store import by_family, read_split
from repro.workflow.io import InputError

SETTINGS = {
    "data_seed": 0,
    "refine": {"square": 1, "lshape": 1},
    "splits": {"train": 2, "test_id": 1, "test_ood": 2, "test_ood_lshape": 1},
    "id_amplitude": 0.1,
    "ood_amplitude": 0.2,
    "beta": 1.0,
    "source_modes": 2,
    "source_scale": 6.0,
    "neumann_scale": 1.0,
}


class Paths(dict):
    __getattr__ = dict.__getitem__


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("geo")
    out = Paths(meshes=str(root / "meshes.zarr"), manifest=str(root / "manifest.json"))
    data.main(SimpleNamespace(params=SimpleNamespace(settings=SETTINGS), output=out))
    return out


def test_data_stage_writes_every_split_in_the_canonical_layout(store):
    manifest = json.loads(open(store.manifest).read())
    assert {k: v["meshes"] for k, v in manifest["splits"].items()} == {"train": 2, "test_id": 1, "test_ood": 2}
    ood = read_split(store.meshes, "test_ood")
    assert by_family(ood) == {"square": [0], "lshape": [1]}
    s = ood[1]
    assert s["nodes"].shape[1] == 2 and s["cells"].shape[1] == 3 and s["u"].shape == s["load"].shape
    assert s["dirichlet"].any() and np.all(s["u"][s["dirichlet"]] == 0)


def test_missing_split_is_named(store):
    with pytest.raises(InputError, match="meshes.zarr.*no group 'valid'"):
        read_split(store.meshes, "valid")


def test_sample_missing_an_array_is_named(store, tmp_path):
    path = tmp_path / "broken.zarr"
    root = zarr.open_group(str(path), mode="w")
    g = root.create_group("train").create_group("0")
    g.create_array("nodes", data=np.zeros((3, 2)))
    with pytest.raises(InputError, match="broken.zarr.*sample train/0 lacks"):
        read_split(str(path), "train")
