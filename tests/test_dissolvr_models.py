"""DISSOLVR's method pieces against independent computations: TreeSHAP against brute-force Shapley values of
the tree ensemble's path-dependent expectation, McGowan volumes against tabulated ones, ESOL refit against
scikit-learn, the scaffold split's disjointness, and the featuriser's blocks."""

import itertools
import math

import numpy as np
import pytest
from rdkit import Chem
from sklearn.linear_model import LinearRegression

from repro.papers.dissolvr.evaluate import relative_increase
from repro.papers.dissolvr.features import mcgowan_volume, molecule_features, murcko_scaffold
from repro.papers.dissolvr.models import fit_gbm, fit_linear, predict_linear, scaffold_split, tree_shap

GBM = dict(
    n_estimators=3, learning_rate=0.5, num_leaves=4, min_child_samples=5, subsample=1.0, colsample_bytree=1.0,
    reg_lambda=0.0,
)  # fmt: skip


def conditional_expectation(node: dict, x: np.ndarray, known: set[int]) -> float:
    """E[tree(x) | x_S] as TreeSHAP defines it: follow x on known features, else average children by cover."""
    if "leaf_value" in node:
        return node["leaf_value"]
    left, right = node["left_child"], node["right_child"]
    if node["split_feature"] in known:
        go_left = x[node["split_feature"]] <= node["threshold"]
        return conditional_expectation(left if go_left else right, x, known)
    count = {id(c): c.get("leaf_count", c.get("internal_count")) for c in (left, right)}
    total = count[id(left)] + count[id(right)]
    return (
        count[id(left)] * conditional_expectation(left, x, known)
        + count[id(right)] * conditional_expectation(right, x, known)
    ) / total


def brute_force_shap(model, x: np.ndarray) -> np.ndarray:
    trees = [t["tree_structure"] for t in model.booster_.dump_model()["tree_info"]]
    p = x.size

    def value(subset):
        return sum(conditional_expectation(t, x, set(subset)) for t in trees)

    phi = np.zeros(p)
    for j in range(p):
        others = [k for k in range(p) if k != j]
        for size in range(p):
            weight = math.factorial(size) * math.factorial(p - size - 1) / math.factorial(p)
            for subset in itertools.combinations(others, size):
                phi[j] += weight * (value(subset + (j,)) - value(subset))
    return phi


def test_tree_shap_equals_brute_force_shapley_values_and_is_additive():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 4))
    y = x[:, 0] * x[:, 1] + np.sin(x[:, 2]) + 0.1 * rng.normal(size=200)
    model = fit_gbm(x, y, GBM, seed=0)
    values, expected = tree_shap(model, x[:5])
    for i in range(5):
        np.testing.assert_allclose(values[i], brute_force_shap(model, x[i]), atol=1e-9)
    np.testing.assert_allclose(values.sum(axis=1) + expected, model.predict(x[:5]), atol=1e-9)


@pytest.mark.parametrize(("smiles", "volume"), [("O", 0.1673), ("c1ccccc1", 0.7164), ("CCO", 0.4491)])
def test_mcgowan_volume_matches_abraham_tables(smiles, volume):
    assert mcgowan_volume(Chem.MolFromSmiles(smiles)) == pytest.approx(volume, abs=1e-4)


def test_esol_refit_equals_scikit_learn_least_squares():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(50, 4)), rng.normal(size=50)
    ref = LinearRegression().fit(x, y)
    coef = fit_linear(x, y)
    np.testing.assert_allclose(coef, [ref.intercept_, *ref.coef_], atol=1e-10)
    np.testing.assert_allclose(predict_linear(coef, x), ref.predict(x), atol=1e-10)


def test_scaffold_split_keeps_every_scaffold_on_one_side():
    smiles = ["c1ccccc1C", "c1ccccc1CC", "c1ccccc1O", "C1CCCCC1N", "C1CCCCC1O", "CCO", "CCCC", "c1ccncc1C"] * 5
    test = scaffold_split(smiles, 0.2, seed=3)
    scaffolds = np.array([murcko_scaffold(s) for s in smiles])
    assert not set(scaffolds[test]) & set(scaffolds[~test])
    assert 0 < test.sum() < len(smiles)


def test_relative_increase_is_the_per_seed_rmse_ratio_minus_one():
    table = {
        "random": {"m": {"seeds": [0, 1], "rmse": [0.5, 0.4]}},
        "scaffold": {"m": {"seeds": [0, 1], "rmse": [0.75, 0.4]}},
    }
    assert relative_increase(table, "m") == pytest.approx([0.5, 0.0])


def test_featuriser_returns_every_block_with_finite_physical_estimates():
    features = molecule_features("CC(=O)Oc1ccccc1C(=O)O")
    blocks = {k.split(":")[0] for k in features}
    assert blocks == {"rdkit", "surface", "joback", "abraham", "esol"}
    assert "rdkit:qed" not in features and len([k for k in features if k.startswith("rdkit:")]) > 200
    for key in ("joback:Tb", "joback:Tm", "joback:gse_logS", "abraham:V", "abraham:E"):
        assert np.isfinite(features[key])
    with pytest.raises(ValueError, match="cannot parse"):
        molecule_features("C1CC")
