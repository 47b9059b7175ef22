"""Stage: backbone windows from the structures source, with their DSSP and the fold-class proxy label.

Each chain of ``data/structures/chains.parquet`` is cut into windows of ``window`` residues every
``stride`` residues (a chain shorter than the window but at least ``min_length`` long is one padded,
masked window). ``group`` numbers the distinct sequences (NMR models and copies of one protein share
one), the unit the evaluation resamples. A window inherits its chain's split (the source splits by sequence group), so no
protein has windows on both sides of the reconstruction test (the probes' cross-fitting folds are whole
groups too: repro.papers.protein_tokens.evaluate.probe_folds). The probe label is the
CATH-class proxy from DSSP content: mainly-alpha (helix >= 40 %, strand < 10 %), mainly-beta (strand >=
30 %, helix < 10 %), alpha/beta otherwise (CATH classes are defined by secondary-structure content).
"""

from __future__ import annotations

import logging

import numpy as np

from repro.data.structures import DSSP_CLASSES, SPLITS, read_chains
from repro.papers.protein_tokens.arrays import write_arrays
from repro.workflow.io import InputError, atomic_path
from repro.workflow.manifest import file_record, write_manifest

log = logging.getLogger(__name__)
FOLD_CLASSES = ("mainly_alpha", "mainly_beta", "alpha_beta")


def fold_class(dssp: str, rules: dict) -> int:
    """Index into :data:`FOLD_CLASSES` of a DSSP string's content."""
    helix, strand = dssp.count("H") / len(dssp), dssp.count("E") / len(dssp)
    if helix >= rules["alpha_helix_min"] and strand < rules["alpha_strand_max"]:
        return 0
    if strand >= rules["beta_strand_min"] and helix < rules["beta_helix_max"]:
        return 1
    return 2


def window_starts(length: int, window: int, stride: int) -> list[int]:
    """Window starts covering a chain; the last window ends at the chain's end."""
    if length <= window:
        return [0]
    starts = list(range(0, length - window + 1, stride))
    if starts[-1] != length - window:
        starts.append(length - window)
    return starts


def make_windows(chains, settings: dict) -> dict[str, np.ndarray]:
    window, stride = settings["window"], settings["stride"]
    backbone, mask, dssp, split, chain_index, labels, groups = [], [], [], [], [], [], []
    kept, sequences = [], {}
    for chain in chains:
        length = len(chain.sequence)
        if length < settings["min_length"]:
            continue
        kept.append(chain.chain_id)
        for start in window_starts(length, window, stride):
            stop = min(start + window, length)
            bb = np.zeros((window, 3, 3), np.float32)
            bb[: stop - start] = chain.backbone[start:stop]
            m = np.zeros(window, np.float32)
            m[: stop - start] = 1.0
            codes = np.full(window, DSSP_CLASSES.index("C"), np.uint8)
            codes[: stop - start] = [DSSP_CLASSES.index(c) for c in chain.dssp[start:stop]]
            backbone.append(bb)
            mask.append(m)
            dssp.append(codes)
            split.append(SPLITS.index(chain.split))
            chain_index.append(len(kept) - 1)
            groups.append(sequences.setdefault(chain.sequence, len(sequences)))
            labels.append(fold_class(chain.dssp[start:stop], settings["fold_class"]))
    if not backbone:
        raise InputError("chains", f"no chain reaches min_length {settings['min_length']}")
    return {
        "backbone": np.stack(backbone),
        "mask": np.stack(mask),
        "dssp": np.stack(dssp),
        "split": np.asarray(split, np.int8),
        "chain": np.asarray(chain_index, np.int32),
        "group": np.asarray(groups, np.int32),
        "label": np.asarray(labels, np.int8),
        "chain_ids": np.asarray(kept),
    }


def main(job) -> None:
    settings = job.params.settings["windows"]
    chains = read_chains(job.input.chains)
    arrays = make_windows(chains, settings)
    for name, chosen in (("train", arrays["split"] == 0), ("held-out (val, test)", arrays["split"] > 0)):
        if not chosen.any():
            raise InputError(job.input.chains, f"no {name} windows (check the source's split fractions)")
    with atomic_path(job.output.windows) as tmp:
        write_arrays(tmp, arrays)
    counts = {s: int((arrays["split"] == i).sum()) for i, s in enumerate(SPLITS)}
    classes = {c: int((arrays["label"] == i).sum()) for i, c in enumerate(FOLD_CLASSES)}
    log.info(
        "%d windows from %d chains: %s; classes %s", len(arrays["split"]), len(arrays["chain_ids"]), counts, classes
    )
    root = job.output.manifest.rsplit("/", 1)[0]
    write_manifest(
        job.output.manifest,
        source="derived",
        producer="repro.papers.protein_tokens.data",
        files=[file_record(job.output.windows, root), file_record(job.input.chains, root, role="input")],
        licence="as the structures source (data/structures/manifest.json)",
        settings=settings,
        packages=("numpy", "pyarrow"),
        details={"windows_per_split": counts, "fold_classes": classes, "chains": len(arrays["chain_ids"])},
    )
