"""CHGNet 0.3.0 static energies (the MLIP that verifies reconstructions and scores formation energies, standing
in for MatterSim, whose weights are not in its wheel).

Formation energy per atom: CHGNet's energy per atom minus the mean of CHGNet's own elemental reference energies
(its AtomRef composition model) over the atoms; the same MLIP for reconstructions and ground truths.
"""

from __future__ import annotations

import numpy as np

BATCH = 32  # structures per CHGNet batch: memory flat in the number of hypotheses


class MLIP:
    def __init__(self, model: str):
        from chgnet.model import CHGNet

        self.model = CHGNet.load(model_name=model, verbose=False)
        self.reference = self.model.composition_model.fc.weight.detach().numpy().ravel()
        self.name = f"CHGNet {model}"

    def formation(self, structures: list) -> np.ndarray:
        """Formation energy per atom (eV) of each structure, in one batch."""
        if not structures:
            return np.zeros(0)
        predictions = self.model.predict_structure(structures, task="e", batch_size=BATCH)
        if isinstance(predictions, dict):
            predictions = [predictions]
        refs = [np.mean([self.reference[site.specie.Z - 1] for site in s]) for s in structures]
        return np.array([float(p["e"]) - r for p, r in zip(predictions, refs)])
