"""DISSOLVR-lite (gradient-boosted trees with TreeSHAP) and the baselines, fitted on the same rows.

- ``dissolvr``: LightGBM regressor on every descriptor block; attributions are LightGBM's exact TreeSHAP
  (``pred_contrib=True``, the path-dependent algorithm of Lundberg et al. 2020), so
  sum(SHAP) + expected value = prediction holds per molecule;
- ``gbm_rdkit``: the same model on the RDKit block only (ablation without the physical blocks);
- ``esol_refit``: least squares on Delaney's four descriptors; ``esol_original``: Delaney's coefficients;
- ``rf_morgan``: random forest on Morgan fingerprints (radius 2, 2,048 bits);
- ``ridge_rdkit``: ridge regression on the standardised RDKit block (median-imputed).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from repro.papers.dissolvr.features import murcko_scaffold

ESOL_ORIGINAL = np.array([0.16, -0.63, -0.0062, 0.066, -0.74])
"""Delaney (2004): logS = 0.16 - 0.63 cLogP - 0.0062 MW + 0.066 RB - 0.74 AP."""


def fit_gbm(x: np.ndarray, y: np.ndarray, settings: dict, seed: int, threads: int = 1):
    import lightgbm as lgb

    model = lgb.LGBMRegressor(
        n_estimators=settings["n_estimators"],
        learning_rate=settings["learning_rate"],
        num_leaves=settings["num_leaves"],
        min_child_samples=settings["min_child_samples"],
        subsample=settings["subsample"],
        subsample_freq=1,
        colsample_bytree=settings["colsample_bytree"],
        reg_lambda=settings["reg_lambda"],
        random_state=seed,
        n_jobs=threads,
        deterministic=True,
        force_row_wise=True,
        verbose=-1,
    )
    return model.fit(x, y)


def tree_shap(model, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact TreeSHAP values (rows, features) and the expected value per row, from LightGBM's booster."""
    contrib = model.booster_.predict(x, pred_contrib=True)
    return contrib[:, :-1], contrib[:, -1]


def fit_linear(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares coefficients [intercept, *slopes]."""
    design = np.column_stack([np.ones(len(x)), x])
    return np.linalg.lstsq(design, y, rcond=None)[0]


def predict_linear(coef: np.ndarray, x: np.ndarray) -> np.ndarray:
    return coef[0] + x @ coef[1:]


def fit_rf(bits: np.ndarray, y: np.ndarray, settings: dict, seed: int, threads: int = 1):
    from sklearn.ensemble import RandomForestRegressor

    model = RandomForestRegressor(
        n_estimators=settings["n_estimators"],
        max_features=settings["max_features"],
        min_samples_leaf=settings["min_samples_leaf"],
        random_state=seed,
        n_jobs=threads,
    )
    model.fit(bits, y)
    # Trees are grown in parallel deterministically (one seed per tree), but a parallel predict sums the
    # trees' outputs in whatever order threads finish, which changes the last bits between runs.
    return model.set_params(n_jobs=1)


def fit_ridge(x: np.ndarray, y: np.ndarray, alpha: float):
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(SimpleImputer(strategy="median"), StandardScaler(), Ridge(alpha=alpha)).fit(x, y)


def random_split(n: int, test_fraction: float, seed: int) -> np.ndarray:
    """Boolean test mask with round(test_fraction * n) rows drawn at random."""
    test = np.zeros(n, bool)
    test[np.random.default_rng([seed, 17]).permutation(n)[: round(test_fraction * n)]] = True
    return test


def scaffold_split(smiles: Sequence[str], test_fraction: float, seed: int) -> np.ndarray:
    """Bemis-Murcko scaffold split: whole scaffold groups, in a seeded random order, fill the test set
    until it holds test_fraction of the rows, so no scaffold is on both sides."""
    scaffolds = np.array([murcko_scaffold(s) for s in smiles])
    groups = np.unique(scaffolds)
    order = np.random.default_rng([seed, 29]).permutation(groups.size)
    target = test_fraction * len(smiles)
    test, count = np.zeros(len(smiles), bool), 0
    for g in groups[order]:
        members = scaffolds == g
        if count + members.sum() > target * 1.05 and count > 0:
            continue
        test |= members
        count += int(members.sum())
        if count >= target:
            break
    return test
