"""NMRNet++'s paper claims fail on counterfactual metrics (the baseline's errors in the method's place)."""

import copy

import numpy as np
import pytest

from repro.papers.nmrshift.claims import CLAIMS, FULL_SCALE
from repro.reporting.claims import verdict

KEYS = [f"0:m{i}" for i in range(12)]


def table(err, set_err=None, solvent="CDCl3"):
    err = np.asarray(err, float)
    set_err = err / 4 if set_err is None else np.asarray(set_err, float)
    return {
        "key": KEYS,
        "solvent": [solvent if i % 2 else "DMSO-d6" for i in range(len(KEYS))],
        "err": err.tolist(),
        "set_err": set_err.tolist(),
        # the training-mean predictor: a constant per atom, far worse than any model that learned
        "trivial_err": np.full(len(KEYS), 20.0).tolist(),
        "trivial_set_err": np.full(len(KEYS), 20.0).tolist(),
        "atoms": [5] * len(KEYS),
    }


def variant(scale, set_scale=None):
    base = np.linspace(0.8, 1.2, len(KEYS)) * scale
    set_err = None if set_scale is None else base * set_scale
    return {"labelled": table(base, set_err), "unlabelled": table(base / 2)}


def metrics():
    per = {}
    for n in ("1H", "13C"):
        per[f"{n}/supervised"] = variant(1.0)
        per[f"{n}/semi"] = variant(0.7)
        per[f"{n}/semi_hungarian"] = variant(0.7)
        per[f"{n}/hose"] = variant(1.5)
        per[f"{n}/weak_only"] = variant(3.0, set_scale=0.1)
    per["1H/semi_nosolvent"] = variant(1.2)
    variants = {k: {"max_Lmol_minus_Latom_per_molecule": -0.1} for k in per}
    for v, block, n in FULL_SCALE.values():
        variants.setdefault(f"{n}/{v}", {})[block] = {"mae": 1.0}
    return {
        "per_molecule": per,
        "variants": variants,
        "identity": {"gaps": {"l1": 0.0, "l2": 1e-15}, "concave_gap": 0.2189},
        "reported": dict.fromkeys(FULL_SCALE, 1.0),
    }


def swapped(target, source, nuclei=("1H", "13C")):
    m = copy.deepcopy(metrics())
    for n in nuclei:
        m["per_molecule"][f"{n}/{target}"] = copy.deepcopy(m["per_molecule"][f"{n}/{source}"])
    return m


def test_every_claim_passes_on_metrics_that_support_it():
    for scale in ("smoke", "full"):
        ids = [c.id for c in CLAIMS if scale in c.scales]
        assert {i: verdict(CLAIMS, i, metrics(), scale) for i in ids} == dict.fromkeys(ids, "pass")


@pytest.mark.counterfactual("nmrshift", "semi_beats_supervised_1H")
def test_supervised_errors_in_the_semi_place_fail_for_1h():
    assert verdict(CLAIMS, "semi_beats_supervised_1H", swapped("semi", "supervised", ("1H",))) == "fails"


@pytest.mark.counterfactual("nmrshift", "semi_beats_supervised_13C")
def test_supervised_errors_in_the_semi_place_fail_for_13c():
    assert verdict(CLAIMS, "semi_beats_supervised_13C", swapped("semi", "supervised", ("13C",))) == "fails"


@pytest.mark.counterfactual("nmrshift", "semi_beats_hose")
def test_hose_as_good_on_one_nucleus_fails():
    assert verdict(CLAIMS, "semi_beats_hose", swapped("hose", "semi", ("13C",))) == "fails"


@pytest.mark.counterfactual("nmrshift", "weak_only_collapse")
def test_weak_only_with_the_semi_atom_to_set_ratio_fails():
    assert verdict(CLAIMS, "weak_only_collapse", swapped("weak_only", "semi")) == "fails"


@pytest.mark.counterfactual("nmrshift", "solvent_dmso")
def test_no_gain_from_solvent_conditioning_fails():
    no_gain = swapped("semi_nosolvent", "semi", ("1H",))
    assert verdict(CLAIMS, "solvent_dmso", no_gain, "full") == "fails"
    assert verdict(CLAIMS, "solvent_dmso_planted_offset", no_gain) == "fails"


def test_solvent_claim_is_a_check_on_the_generated_spectra_and_a_paper_claim_on_real_ones():
    kinds = {c.id: (c.kind, c.scales) for c in CLAIMS}
    assert kinds["solvent_dmso_planted_offset"] == ("check", ("smoke",))
    assert kinds["solvent_dmso"] == ("paper", ("full",))


@pytest.mark.parametrize("variant", ["semi", "supervised", "hose", "weak_only"])
def test_a_model_no_better_than_the_training_mean_leaves_its_claims_inconclusive(variant):
    m = copy.deepcopy(metrics())
    for kind in ("labelled", "unlabelled"):
        block = m["per_molecule"][f"1H/{variant}"][kind]
        block["trivial_err"], block["trivial_set_err"] = list(block["err"]), list(block["set_err"])
    assert verdict(CLAIMS, f"learn_{variant}_1H", m) == "fails"
    resting = [c.id for c in CLAIMS if f"learn_{variant}_1H" in (c.rests_on or ()) and "smoke" in c.scales]
    assert resting and all(verdict(CLAIMS, c, m) == "inconclusive" for c in resting)


@pytest.mark.parametrize(
    "key",
    [
        pytest.param("semi_Latom_mae_1H", marks=pytest.mark.counterfactual("nmrshift", "semi_Latom_mae_1H")),
        pytest.param("semi_Latom_mae_13C", marks=pytest.mark.counterfactual("nmrshift", "semi_Latom_mae_13C")),
        pytest.param("semi_lit_Lmol_mae_1H", marks=pytest.mark.counterfactual("nmrshift", "semi_lit_Lmol_mae_1H")),
        pytest.param("semi_lit_Lmol_mae_13C", marks=pytest.mark.counterfactual("nmrshift", "semi_lit_Lmol_mae_13C")),
        pytest.param(
            "supervised_Latom_mae_1H", marks=pytest.mark.counterfactual("nmrshift", "supervised_Latom_mae_1H")
        ),
        pytest.param(
            "supervised_Latom_mae_13C", marks=pytest.mark.counterfactual("nmrshift", "supervised_Latom_mae_13C")
        ),
    ],
)
def test_mae_far_from_the_papers_fails(key):
    m = metrics()
    m["reported"][key] = 2.0
    assert verdict(CLAIMS, key, m, "full") == "fails"


def test_checks_fail_when_the_identity_breaks():
    m = metrics()
    m["identity"]["gaps"]["huber"] = 0.1
    m["variants"]["1H/semi"]["max_Lmol_minus_Latom_per_molecule"] = 0.5
    m["per_molecule"]["1H/semi_hungarian"] = copy.deepcopy(m["per_molecule"]["1H/supervised"])
    for claim in ("sort_equals_hungarian", "set_le_atom", "hungarian_twin"):
        assert verdict(CLAIMS, claim, m) == "fails"


def test_missing_or_nan_inputs_still_give_a_failing_claim():
    m = metrics()
    m["per_molecule"]["1H/semi"]["labelled"]["err"][0] = float("nan")
    del m["per_molecule"]["1H/semi_nosolvent"]
    # a NaN error fails the learning check, so the claim resting on it is inconclusive, never a pass
    assert verdict(CLAIMS, "learn_semi_1H", m) == "fails"
    assert verdict(CLAIMS, "semi_beats_supervised_1H", m) == "inconclusive"
    assert verdict(CLAIMS, "solvent_dmso_planted_offset", m) == "fails"


def test_a_nan_prediction_makes_its_molecules_error_nan_not_zero():
    import pandas as pd

    from repro.papers.nmrshift.evaluate import per_molecule

    pairs = pd.DataFrame(
        {
            "pred": [1.0, np.nan, 2.0],
            "true": [1.5, 2.0, 2.5],
            "sorted_pred": [1.0, np.nan, 2.0],
            "sorted_obs": [1.5, 2.0, 2.5],
            "trivial": [2.0] * 3,
            "sorted_trivial": [2.0] * 3,
            "kind": "labelled",
            "fold": 0,
            "mol_id": ["a", "a", "b"],
            "solvent_group": "CDCl3",
        }
    )
    out = per_molecule(pairs)["labelled"]
    assert np.isnan(out["err"][0]) and out["err"][1] == 0.5 and out["atoms"] == [2, 1]
    assert out["trivial_err"] == [0.5, 0.5]
