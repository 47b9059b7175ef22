"""The metagenome data layer: local files are validated with clear errors; the generator is seeded."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from repro.data import metagenome
from repro.papers.hysomi.soil_model import Bounds
from repro.workflow.io import InputError

SECTION = {
    "seed": 7,
    "n_samples": 12,
    "split_fractions": [0.5, 0.25, 0.25],
    "complexity": ["L1", "L3"],
    "noise_sd": 0.05,
    "t_end": 60,
    "obs_days": [0, 7, 14, 28, 60],
    "observed_states": ["CO2", "MBC"],
}


@pytest.fixture
def user_files(tmp_path):
    traits = pd.DataFrame({"sample_id": ["s1", "s2", "s3"], "gc_content": [0.5, 0.6, 0.55], "n_cazymes": [3, 7, 5]})
    obs = pd.DataFrame(
        {
            "sample_id": ["s1", "s1", "s2", "s3"],
            "time": [0, 7, 7, 7],
            "state": ["CO2", "CO2", "MBC", "CO2"],
            "value": [0.0, 0.2, 0.4, 0.3],
        }
    )
    traits.to_csv(tmp_path / "traits.csv", index=False)
    obs.to_csv(tmp_path / "obs.tsv", sep="\t", index=False)
    return tmp_path, traits, obs


def _read(tmp_path):
    return metagenome.read_local(
        {"traits": str(tmp_path / "traits.csv"), "observations": str(tmp_path / "obs.tsv")}, seed=0
    )


def test_local_files_become_canonical(user_files):
    tmp_path, _, _ = user_files
    traits, obs = _read(tmp_path)
    assert list(traits.columns[:3]) == ["sample_id", "split", "complexity"]
    assert obs["value"].sel(sample="s1", time=7.0, state="CO2").item() == 0.2
    assert bool(obs["observed"].sel(sample="s2", time=7.0, state="MBC"))
    assert not bool(obs["observed"].sel(sample="s2", time=7.0, state="SOC"))
    assert np.isnan(obs["value"].sel(sample="s2", time=7.0, state="SOC").item())


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda t, o: (t.drop(columns="sample_id"), o), "missing column"),
        (lambda t, o: (t, o.drop(columns="state")), "missing column"),
        (lambda t, o: (t, o.assign(sample_id=["s1", "s1", "s2", "s9"])), "s9"),
        (lambda t, o: (t.assign(gc_content=[0.5, -0.1, 0.5]), o), "negative"),
        (lambda t, o: (t.assign(n_cazymes=["3", "many", "5"]), o), "not a number"),
        (lambda t, o: (t, o.assign(value=[0.0, 0.2, "x", 0.3])), "not a number"),
        (lambda t, o: (t, o.assign(state=["CO2", "CO2", "BIOMASS", "CO2"])), "unknown state"),
    ],
)
def test_bad_user_files_name_file_and_problem(user_files, mutate, message):
    tmp_path, traits, obs = user_files
    traits, obs = mutate(traits.copy(), obs.copy())
    traits.to_csv(tmp_path / "traits.csv", index=False)
    obs.to_csv(tmp_path / "obs.tsv", sep="\t", index=False)
    with pytest.raises(InputError, match=message) as err:
        _read(tmp_path)
    assert str(tmp_path) in str(err.value)


def test_generator_is_deterministic_and_complete(repo):
    bounds = Bounds.from_yaml(repo / "resources/hysomi/constraints.yaml")
    a_traits, a_obs, a_params = metagenome.generate(SECTION, bounds)
    b_traits, b_obs, b_params = metagenome.generate(SECTION, bounds)
    pd.testing.assert_frame_equal(a_traits, b_traits)
    xr.testing.assert_identical(a_obs, b_obs)
    assert len(a_traits) == 24 and set(a_traits["split"]) == {"train", "val", "test"}
    l3 = a_traits[a_traits["complexity"] == "L3"]
    assert l3["irrelevant_1"].notna().all()
    assert a_traits[a_traits["complexity"] == "L1"]["irrelevant_1"].isna().all()
    assert (a_traits[list(metagenome.COUNT_TRAITS)] % 1 == 0).all().all()
    other = metagenome.generate({**SECTION, "seed": 8}, bounds)[0]
    assert not other.equals(a_traits)


def test_main_writes_canonical_files_atomically(repo, tmp_path):
    out = {
        name: str(tmp_path / f)
        for name, f in [
            ("traits", "traits.parquet"),
            ("observations", "observations.zarr"),
            ("params_true", "params_true.parquet"),
            ("constraints", "constraints.yaml"),
            ("manifest", "manifest.json"),
        ]
    }
    job = SimpleNamespace(
        input=SimpleNamespace(constraints=str(repo / "resources/hysomi/constraints.yaml")),
        output=SimpleNamespace(**out),
        params=SimpleNamespace(section={"source": "embedded", "embedded": SECTION}),
        config={"seed": 0},
    )
    metagenome.main(job)
    ds = xr.open_zarr(out["observations"])
    assert set(ds.data_vars) == {"value", "observed", "x0", "truth"}
    assert ds["value"].dims == ("sample", "time", "state")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["traits.parquet", "observations.zarr", "params_true.parquet", "constraints.yaml", "manifest.json"]
    )
