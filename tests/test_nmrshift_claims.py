"""NMRNet++'s paper claims fail on counterfactual metrics (the baseline's errors in the method's place)."""

import copy

import numpy as np
import pytest

from repro.papers.nmrshift.claims import CLAIMS, FULL_SCALE
from repro.reporting.claims import verdict

KEYS = [f"0:m{i}" for i in range(12)]


def table(err, set_err=None, solvent="CDCl3"):
    err = np.asarray(err, float)
    return {
        "key": KEYS,
        "solvent": [solvent if i % 2 else "DMSO-d6" for i in range(len(KEYS))],
        "err": err.tolist(),
        "set_err": (err / 4 if set_err is None else np.asarray(set_err, float)).tolist(),
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
    assert {c.id: verdict(CLAIMS, c.id, metrics(), "full") for c in CLAIMS} == {c.id: "pass" for c in CLAIMS}


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
    assert verdict(CLAIMS, "solvent_dmso", swapped("semi_nosolvent", "semi", ("1H",))) == "fails"


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
    assert verdict(CLAIMS, "semi_beats_supervised_1H", m) == "fails"
    assert verdict(CLAIMS, "solvent_dmso", m) == "fails"
