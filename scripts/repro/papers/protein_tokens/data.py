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
    """Every window of every chain of at least ``min_length`` residues, in arrays allocated once at their final
    size (a first pass counts the windows): at paper scale a million windows are 1.3 GB of arrays, and lists
    of per-window arrays stacked at the end would hold that twice plus Python's overhead per window."""
    window, stride = settings["window"], settings["stride"]
    kept = [chain for chain in chains if len(chain.sequence) >= settings["min_length"]]
    if not kept:
        raise InputError("chains", f"no chain reaches min_length {settings['min_length']}")
    starts = [window_starts(len(chain.sequence), window, stride) for chain in kept]
    n = sum(len(s) for s in starts)
    out = {
        "backbone": np.zeros((n, window, 3, 3), np.float32),
        "mask": np.zeros((n, window), np.float32),
        "dssp": np.full((n, window), DSSP_CLASSES.index("C"), np.uint8),
        "split": np.empty(n, np.int8),
        "chain": np.empty(n, np.int32),
        "group": np.empty(n, np.int32),
        "label": np.empty(n, np.int8),
        "chain_ids": np.asarray([chain.chain_id for chain in kept]),
    }
    sequences: dict[str, int] = {}
    row = 0
    for index, (chain, chain_starts) in enumerate(zip(kept, starts)):
        codes = np.asarray([DSSP_CLASSES.index(c) for c in chain.dssp], np.uint8)
        group = sequences.setdefault(chain.sequence, len(sequences))
        for start in chain_starts:
            stop = min(start + window, len(chain.sequence))
            out["backbone"][row, : stop - start] = chain.backbone[start:stop]
            out["mask"][row, : stop - start] = 1.0
            out["dssp"][row, : stop - start] = codes[start:stop]
            out["split"][row] = SPLITS.index(chain.split)
            out["chain"][row] = index
            out["group"][row] = group
            out["label"][row] = fold_class(chain.dssp[start:stop], settings["fold_class"])
            row += 1
    return out


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
