"""A second, pandas code path for gating and hierarchical phenotyping (checks the skills' numpy path).

Written independently of :mod:`repro.papers.sp_mind.skills`: one boolean DataFrame of gate calls, rules
evaluated with DataFrame reductions, parents resolved by walking the workflow table with ``groupby``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def gate_calls(cells: pd.DataFrame, gates: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(positive calls, scimap-rescaled intensities) on the gates' log1p scale, one column per gated marker."""
    logs = np.log1p(cells[list(gates["marker"])])
    g = gates.set_index("marker")["gate"]
    lo, hi = logs.min(), logs.max()
    below = 0.5 * (logs - lo) / (g - lo)
    above = 0.5 + 0.5 * (logs - g) / (hi - g)
    scaled = above.where(logs >= g, below).clip(0.0, 1.0)
    return scaled >= 0.5, scaled


def phenotype_counts(cells: pd.DataFrame, gates: pd.DataFrame, workflow: pd.DataFrame) -> dict[str, int]:
    calls, scaled = gate_calls(cells, gates)
    label = pd.Series("all", index=cells.index, dtype=object)
    parents = ["all"]
    while parents:
        parent = parents.pop(0)
        kids = workflow[workflow["parent"] == parent]
        if kids.empty:
            continue
        scores = {}
        for name, rules in kids.groupby("phenotype", sort=False):
            ok = pd.Series(True, index=cells.index)
            for rule, part in rules.groupby("rule"):
                block = calls[list(part["marker"])]
                ok &= {
                    "pos": block.all(axis=1),
                    "allpos": block.all(axis=1),
                    "neg": ~block.any(axis=1),
                    "allneg": ~block.any(axis=1),
                    "anypos": block.any(axis=1),
                    "anyneg": ~block.all(axis=1),
                }[rule]
            lifted = list(rules.loc[rules["rule"].isin(["pos", "allpos", "anypos"]), "marker"])
            score = scaled[lifted].max(axis=1) if lifted else pd.Series(0.0, index=cells.index)
            scores[name] = score.where(ok, -np.inf)
        table = pd.DataFrame(scores)
        here = label == parent
        best = table.idxmax(axis=1)
        matched = np.isfinite(table.max(axis=1)) & here
        label[matched] = best[matched]
        if parent == "all":
            label[here & ~matched] = "Unknown"
        parents += list(table.columns)
    return {str(k): int(v) for k, v in label.value_counts().items()}
