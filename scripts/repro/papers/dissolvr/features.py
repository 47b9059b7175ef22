"""DISSOLVR's physically grounded descriptor blocks, the ESOL descriptors and Morgan fingerprints.

Blocks (column prefixes), after the SC3 benchmark's description "RDKit + MOSE + Joback + Abraham (+ T)":
- ``rdkit:`` every RDKit 2-D descriptor of ``Descriptors.descList`` except QED (a drug-likeness score,
  not a physical property, and a quarter of the featurising time); ``Ipc`` enters as log10(1 + Ipc)
  because it overflows;
- ``surface:`` the molecular-surface / electrostatics block standing in for MOSE, whose definition was not
  located: Gasteiger charge extremes and spread, polar-surface fraction TPSA / LabuteASA, and the
  charge-weighted surface balance from the PEOE_VSA bins;
- ``joback:`` Joback group-contribution estimates (thermo 0.6.1): Tb, Tm, Tc, log10 Pc, Vc, ΔHf, ΔGf,
  ΔHfus, ΔHvap, plus the general solubility equation logS = 0.5 - 0.01 (Tm - 25 °C) - logP with the
  Joback Tm (NaN where Joback's fragmentation does not cover the molecule);
- ``abraham:`` McGowan volume V (exact, atom increments and bonds) and the excess molar refraction
  E = MR / 10 - 2.832 V + 0.526 from Crippen's molar refractivity; S, A and B have no exact
  structure-only formula and are left out (the RDKit block carries H-bond counts and TPSA);
- ``state:`` temperature in K (the solvent is featurised by the same blocks with prefix ``solvent_``).
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd
from rdkit import Chem, RDLogger
from rdkit.Chem import Crippen, Descriptors, rdFingerprintGenerator, rdMolDescriptors, rdPartialCharges

log = logging.getLogger(__name__)

RDKIT_DESCRIPTORS = [(name, fn) for name, fn in Descriptors.descList if name != "qed"]
MCGOWAN = {
    "C": 16.35, "H": 8.71, "O": 12.43, "N": 14.39, "F": 10.48, "Cl": 20.95, "Br": 26.21, "I": 34.53,
    "S": 22.91, "P": 24.87, "Si": 26.83, "B": 18.32, "Se": 27.81, "As": 29.42, "Ge": 31.02, "Sn": 39.35,
}  # fmt: skip
"""McGowan characteristic volume increments, cm^3/mol (Abraham & McGowan 1987)."""
JOBACK = ("Tb", "Tm", "Tc", "Pc", "Vc", "Hf", "Gf", "Hfus", "Hvap")
ESOL = ("clogp", "mw", "rotatable_bonds", "aromatic_proportion")


def rdkit_block(mol: Chem.Mol) -> dict[str, float]:
    out = {}
    for name, fn in RDKIT_DESCRIPTORS:
        try:
            value = float(fn(mol))
        except (ValueError, ZeroDivisionError, RuntimeError):
            value = float("nan")
        out[name] = math.log10(1.0 + value) if name == "Ipc" and value >= 0 else value
    return out


def surface_block(mol: Chem.Mol) -> dict[str, float]:
    rdPartialCharges.ComputeGasteigerCharges(mol)
    charges = np.array([a.GetDoubleProp("_GasteigerCharge") for a in mol.GetAtoms()], float)
    charges = charges[np.isfinite(charges)]
    asa = rdMolDescriptors.CalcLabuteASA(mol)
    vsa = np.asarray(rdMolDescriptors.PEOE_VSA_(mol), float)
    centres = np.array([-0.3, -0.25, -0.2, -0.15, -0.1, -0.05, 0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35])
    has_charges = charges.size > 0
    return {
        "q_max": float(np.max(charges)) if has_charges else float("nan"),
        "q_min": float(np.min(charges)) if has_charges else float("nan"),
        "q_abs_mean": float(np.mean(np.abs(charges))) if has_charges else float("nan"),
        "polar_fraction": rdMolDescriptors.CalcTPSA(mol) / asa if asa > 0 else float("nan"),
        "charge_balance": float(np.dot(vsa, centres) / asa) if asa > 0 else float("nan"),
    }


def mcgowan_volume(mol: Chem.Mol) -> float:
    """McGowan volume V in units of 100 cm^3/mol: (sum of atom increments - 6.56 * bonds) / 100."""
    molh = Chem.AddHs(mol)
    total = 0.0
    for atom in molh.GetAtoms():
        if atom.GetSymbol() not in MCGOWAN:
            return float("nan")
        total += MCGOWAN[atom.GetSymbol()]
    return (total - 6.56 * molh.GetNumBonds()) / 100.0


def abraham_block(mol: Chem.Mol) -> dict[str, float]:
    v = mcgowan_volume(mol)
    return {"V": v, "E": Crippen.MolMR(mol) / 10.0 - 2.832 * v + 0.526}


def joback_block(mol: Chem.Mol, clogp: float) -> dict[str, float]:
    from thermo.group_contribution.joback import Joback

    try:
        est = Joback(mol).estimate()
    except (ValueError, TypeError, KeyError, ZeroDivisionError):
        est = {}
    out = {k: float(est[k]) if est.get(k) is not None else float("nan") for k in JOBACK}
    out["Pc"] = math.log10(out["Pc"]) if out["Pc"] > 0 else float("nan")
    out["gse_logS"] = 0.5 - 0.01 * (out["Tm"] - 273.15 - 25.0) - clogp
    return out


def esol_block(mol: Chem.Mol) -> dict[str, float]:
    """Delaney's four ESOL descriptors: Crippen logP, MW, rotatable bonds, aromatic heavy-atom fraction."""
    heavy = mol.GetNumHeavyAtoms()
    aromatic = sum(a.GetIsAromatic() for a in mol.GetAtoms())
    return {
        "clogp": Crippen.MolLogP(mol),
        "mw": Descriptors.MolWt(mol),
        "rotatable_bonds": float(rdMolDescriptors.CalcNumRotatableBonds(mol)),
        "aromatic_proportion": aromatic / heavy if heavy else 0.0,
    }


def molecule_features(smiles: str) -> dict[str, float]:
    """Every DISSOLVR block and the ESOL descriptors of one molecule, with block prefixes."""
    RDLogger.DisableLog("rdApp.*")
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        raise ValueError(f"RDKit cannot parse SMILES {smiles!r}")
    esol = esol_block(mol)
    blocks = {
        "rdkit": rdkit_block(mol),
        "surface": surface_block(mol),
        "joback": joback_block(mol, esol["clogp"]),
        "abraham": abraham_block(mol),
        "esol": esol,
    }
    return {f"{b}:{k}": (v if np.isfinite(v) else np.nan) for b, values in blocks.items() for k, v in values.items()}


def featurise(table: pd.DataFrame) -> pd.DataFrame:
    """One row per table row: solute blocks, solvent blocks (prefix ``solvent_``) and temperature."""
    solutes = {s: molecule_features(s) for s in table["solute_smiles"].unique()}
    solvents = {s: molecule_features(s) for s in table["solvent_smiles"].unique()}
    solute = pd.DataFrame([solutes[s] for s in table["solute_smiles"]])
    solvent = pd.DataFrame([solvents[s] for s in table["solvent_smiles"]]).add_prefix("solvent_")
    solvent = solvent.drop(columns=[c for c in solvent.columns if c.startswith("solvent_esol:")])
    state = pd.DataFrame({"state:T_K": table["T_K"].to_numpy(float)})
    return pd.concat([solute, solvent, state], axis=1).astype("float64")


def morgan_bits(smiles: list[str], radius: int, bits: int) -> np.ndarray:
    """Morgan (ECFP-like) bit vectors, uint8 (molecules, bits)."""
    generator = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=bits)
    out = np.zeros((len(smiles), bits), np.uint8)
    for i, s in enumerate(smiles):
        out[i] = generator.GetFingerprintAsNumPy(Chem.MolFromSmiles(s))
    return out


def murcko_scaffold(smiles: str) -> str:
    """Bemis-Murcko scaffold SMILES (empty for acyclic molecules)."""
    from rdkit.Chem.Scaffolds import MurckoScaffold

    return MurckoScaffold.MurckoScaffoldSmiles(mol=Chem.MolFromSmiles(smiles))
