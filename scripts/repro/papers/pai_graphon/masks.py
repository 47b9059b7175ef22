"""Rule entry ``pai_graphon_masks``: masks of every criterion, width and seed on one dataset.

Output ``results/pai-graphon/masks/<dataset>.zarr``: group <criterion>/w<width>/s<seed> with ``layer0``
(width x 64), ``layer1`` (width x width), ``layer2`` (out x width) boolean masks and ``scores0`` (the
first-layer saliency, float32) and ``fsm_graphon`` (blocks x blocks: the limit graphon the Factorised
Saliency Model predicts for the hidden layer from its scores, repro.papers.pai_graphon.fsm); attribute
``batch_idx`` per seed (the scoring batch, shared by all widths
and criteria).
"""

from __future__ import annotations

import numpy as np
import torch
import zarr

from repro.papers.pai_graphon import criteria, fsm, model
from repro.papers.pai_graphon.store import mask_key, read_dataset
from repro.workflow.device import pick_device
from repro.workflow.io import atomic_path


def scoring_batch(data: dict, size: int, seed: int) -> np.ndarray:
    """Indices of the scoring batch: a seeded draw from the training split (same for every width)."""
    train = np.flatnonzero(data["split"] == 0)
    return np.sort(np.random.default_rng(np.random.SeedSequence([seed, 11])).choice(train, size, replace=False))


def main(job) -> None:
    s = job.params.settings
    data = read_dataset(job.input.data)
    d_out = 1 if data["n_classes"] == 2 else data["n_classes"]
    device = pick_device(job.params.device)
    with atomic_path(job.output.masks) as tmp:
        root = zarr.open_group(tmp, mode="w")
        for seed in s["seeds"]:
            idx = scoring_batch(data, s["batch_size"], seed)
            x, y = torch.from_numpy(data["X"][idx]).to(device), torch.from_numpy(data["y"][idx]).to(device)
            root.attrs[f"batch_idx_s{seed}"] = idx.tolist()
            for width in s["widths"]:
                weights = [w.to(device) for w in model.init_weights(x.shape[1], width, d_out, seed)]
                for criterion in s["criteria"]:
                    masks, scores = criteria.prune(criterion, weights, x, y, s["density"], seed)
                    group = root.require_group(mask_key(criterion, width, seed))
                    for layer, m in enumerate(masks):
                        group.create_array(f"layer{layer}", data=m.cpu().numpy())
                    group.create_array("scores0", data=scores[0].cpu().numpy().astype(np.float32))
                    predicted = fsm.predicted_graphon(scores[1].cpu().numpy(), s["density"], s["blocks"])
                    group.create_array("fsm_graphon", data=predicted)
        root.attrs.update(
            {"density": s["density"], "widths": s["widths"], "seeds": s["seeds"], "criteria": s["criteria"]}
        )
