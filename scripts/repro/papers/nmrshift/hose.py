"""HOSE-like baseline: nearest-environment lookup of shifts in the labelled training set (brief §7).

Each atom carries environment identifiers for radius 0..3 (computed with RDKit in the data stage).
A test atom gets the mean training shift of the atoms sharing its environment at the largest radius
that has a match, as HOSE-code predictors do with their spheres; the global training mean is the
last fallback.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from repro.papers.nmrshift.records import RecordSet


def _codes(records: RecordSet, i: int) -> np.ndarray:
    flat = np.asarray(records.frame["env_codes"].iloc[i], dtype=np.int64)
    return flat.reshape(-1, flat.size // int(records.frame["n_atoms"].iloc[i]))


class EnvironmentLookup:
    """Mean shift per (radius, environment code) over the labelled training atoms."""

    def __init__(self, train: RecordSet):
        sums: dict[tuple[int, int], list[float]] = defaultdict(list)
        for i in range(len(train)):
            codes = _codes(train, i)
            for atom in np.flatnonzero(train.mask[i]):
                for radius, code in enumerate(codes[atom]):
                    if code >= 0:
                        sums[(radius, int(code))].append(float(train.target[i, atom]))
        self.table = {key: float(np.mean(values)) for key, values in sums.items()}
        self.fallback = float(np.nanmean(train.target[train.mask])) if len(train) else 0.0

    def predict_atom(self, codes: np.ndarray) -> float:
        for radius in range(codes.size - 1, -1, -1):
            value = self.table.get((radius, int(codes[radius])))
            if codes[radius] >= 0 and value is not None:
                return value
        return self.fallback

    def predict(self, records: RecordSet) -> list[np.ndarray]:
        """Predicted shifts of each record's covered atoms, in atom order (like the models' ``predict``)."""
        out = []
        for i in range(len(records)):
            codes = _codes(records, i)
            out.append(
                np.array([self.predict_atom(codes[a]) for a in np.flatnonzero(records.mask[i])], dtype=np.float32)
            )
        return out
