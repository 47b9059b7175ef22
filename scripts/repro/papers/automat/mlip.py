"""Stage: CHGNet 0.3.0 static energies of every template on a grid of lattice constants (the MLIP the
controller verifies with, standing in for MatterSim, whose weights are not in its wheel).

For each template and each factor f of ``grid`` the primitive cell at a = f * a_template is evaluated;
formation energy per atom uses CHGNet's own elemental reference energies (its AtomRef composition model).
Output ``energies.json``: {template: {a: [...], energy_per_atom: [...], formation_per_atom: [...]}}.
"""

from __future__ import annotations

import numpy as np

from repro.papers.automat.templates import LIBRARY, structure
from repro.workflow.io import write_json


def main(job) -> None:
    import torch
    from chgnet.model import CHGNet

    torch.set_num_threads(max(1, int(job.threads)))
    settings = job.params.settings
    model = CHGNet.load(model_name=settings["mlip"]["model"], verbose=False)
    reference = model.composition_model.fc.weight.detach().numpy().ravel()
    names = list(settings["generate"]["templates"])
    factors = np.asarray(settings["mlip"]["grid"], float)
    cells = [(name, LIBRARY[name].a * f) for name in names for f in factors]
    structures = [structure(name, a) for name, a in cells]
    predictions = model.predict_structure(structures, task="e", batch_size=len(structures))
    out = {name: {"a": [], "energy_per_atom": [], "formation_per_atom": []} for name in names}
    for (name, a), s, p in zip(cells, structures, predictions):
        e = float(p["e"])
        refs = float(np.mean([reference[site.specie.Z - 1] for site in s]))
        out[name]["a"].append(a)
        out[name]["energy_per_atom"].append(e)
        out[name]["formation_per_atom"].append(e - refs)
    write_json(job.output.energies, {"model": f"CHGNet {settings['mlip']['model']}", "templates": out})
