"""Reference preprocessing of ATLAS-layout trajectories with mdtraj (MDGen's ``prep_sims.py``, ATLAS mode).

Per replicate: heavy atoms of the amino-acid residues only, superposition of every frame
on the first frame, every ``stride``-th frame, atom14 coordinates in Angstrom (float16)
and C-alpha coordinates (float32). Unlike the naive path (load every atom of every frame,
then select, superpose and stride), only the kept frames are decoded: XTC frames are
compressed one by one and the file's frame offsets let the reader seek past the others
(mdtraj's own ``stride`` decodes every frame and drops most). Frames are read in chunks
and written straight into the output ``.npy`` files, so memory stays flat however long
the trajectory; proteins run in a pool of processes.

A protein whose input is bad (unreadable or truncated trajectory, topology that does not
match the trajectory, missing replicate) fails with an :class:`InputError` naming the
protein and the file; its output folder is written atomically, so nothing partial is
left, and the other proteins are processed regardless.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import sys
import types
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import mdtraj as md
import numpy as np

from repro.data.atlas.atom14 import atom14_index, gather_atom14, standard_residue
from repro.data.atlas.layout import atom14_name, ca_name, replicate_paths, require_replicates, topology_path
from repro.workflow.io import InputError, atomic_path

log = logging.getLogger(__name__)
NM_TO_ANGSTROM = 10.0
CHUNK_FRAMES = 1000


@dataclass(frozen=True)
class Selection:
    """Which atoms of the topology are loaded, and where atom14 slots and C-alpha sit among them."""

    atom_indices: np.ndarray
    atom14: np.ndarray
    ca: np.ndarray
    n_atoms: int
    sequence: str


def load_topology(path: Path, name: str) -> md.Topology:
    """Read ``{name}.pdb``; refuse hydrogens whose element was guessed as something else.

    mdtraj guesses elements from atom names when a PDB has no element column and reads
    CHARMM's HG*/HE* hydrogens as mercury and helium, which would make them "heavy".
    """
    try:
        top = md.load_topology(str(path))
    except (OSError, ValueError, KeyError) as err:
        raise InputError(path, f"protein {name}: cannot read topology ({err})") from err
    wrong = [
        a
        for a in top.atoms
        if a.name.startswith("H")
        and a.element is not None
        and a.element.symbol not in ("H", "VS")
        and a.residue.is_protein
        and len(a.name) > 1
    ]
    if wrong:
        raise InputError(
            path,
            f"protein {name}: {len(wrong)} hydrogen names with non-hydrogen elements "
            f"(e.g. {wrong[0]} as {wrong[0].element.symbol}); add an element column",
        )
    return top


def select_atoms(top: md.Topology, path: Path, name: str) -> Selection:
    """Heavy atoms of the amino-acid residues, in topology order, with their atom14 map."""
    indices: list[int] = []
    residues: list[tuple[str, list[tuple[int, str]]]] = []
    codes: list[str] = []
    for residue in top.residues:
        resname = standard_residue(residue.name)
        if resname is None:
            continue
        atoms = []
        for atom in residue.atoms:
            if atom.element is not None and atom.element.symbol not in ("H", "VS"):
                atoms.append((len(indices), atom.name))
                indices.append(atom.index)
        residues.append((resname, atoms))
        codes.append(residue.code or "X")
    if not residues:
        raise InputError(path, f"protein {name}: topology has no amino-acid residues")
    index = atom14_index(residues)
    if (index[:, 1] < 0).any():
        bad = int(np.flatnonzero(index[:, 1] < 0)[0])
        raise InputError(path, f"protein {name}: residue {bad} ({residues[bad][0]}) has no CA atom")
    return Selection(np.asarray(indices), index, index[:, 1].copy(), top.n_atoms, "".join(codes))


def trajectory_atoms(path: Path, name: str) -> int:
    """Atom count stored in a trajectory file (read from its first frame)."""
    try:
        with md.open(str(path)) as handle:
            return int(handle.read(n_frames=1)[0].shape[1])
    except (OSError, RuntimeError, ValueError, IndexError) as err:
        raise InputError(path, f"protein {name}: cannot read trajectory ({err})") from err


def _frames(handle, stride: int, atoms: np.ndarray) -> Iterator[np.ndarray]:
    """Chunks (nm, float32) of every ``stride``-th frame of an open mdtraj trajectory file.

    XTC files with stride > 1 seek frame by frame through their offsets, decoding only the kept frames;
    other formats, and stride 1, read ``CHUNK_FRAMES`` frames per call.
    """
    if stride > 1 and isinstance(handle, md.formats.XTCTrajectoryFile):
        n_frames = len(handle)
        for first in range(0, n_frames, stride * CHUNK_FRAMES):
            frames = []
            for index in range(first, min(first + stride * CHUNK_FRAMES, n_frames), stride):
                handle.seek(index)
                frames.append(handle.read(1, atom_indices=atoms)[0])
            yield np.concatenate(frames)
        return
    kept = 0
    while True:
        xyz = handle.read(CHUNK_FRAMES * stride, atom_indices=atoms)[0]
        if len(xyz) == 0:
            return
        # keep the global frame numbers 0, stride, 2 stride, ... whatever the chunk boundaries
        yield xyz[(-kept) % stride :: stride] if stride > 1 else xyz
        kept += len(xyz)


def iter_replicate(path: Path, top: md.Topology, sel: Selection, stride: int, name: str) -> Iterator[np.ndarray]:
    """Heavy-atom coordinates (Angstrom, float32) of every ``stride``-th frame, superposed on frame 0, in chunks."""
    n_file = trajectory_atoms(path, name)
    if n_file != sel.n_atoms:
        raise InputError(path, f"protein {name}: trajectory has {n_file} atoms, topology {sel.n_atoms}")
    heavy = top.subset(sel.atom_indices)
    reference = None
    try:
        with md.open(str(path)) as handle:
            for xyz in _frames(handle, stride, sel.atom_indices):
                chunk = md.Trajectory(xyz, heavy)
                if reference is None:
                    reference = chunk[0]
                chunk.superpose(reference)
                yield chunk.xyz * NM_TO_ANGSTROM
    except (OSError, RuntimeError, ValueError, EOFError, IndexError) as err:
        raise InputError(path, f"protein {name}: trajectory unreadable or truncated ({err})") from err
    if reference is None:
        raise InputError(path, f"protein {name}: trajectory has no frames")


def _check_frames(path: Path, name: str, n_kept: int, stride: int, expected_frames: int | None) -> None:
    if expected_frames is not None:
        want = -(-expected_frames // stride)
        if n_kept != want:
            raise InputError(
                path,
                f"protein {name}: {n_kept} frames after stride {stride}, expected {want} "
                f"({expected_frames} frames in the archive): truncated?",
            )


def read_replicate(
    path: Path, top: md.Topology, sel: Selection, stride: int, name: str, expected_frames: int | None = None
) -> np.ndarray:
    """All of :func:`iter_replicate` in one array (the benchmark's read-only path)."""
    xyz = np.concatenate(list(iter_replicate(path, top, sel, stride, name)))
    _check_frames(path, name, len(xyz), stride, expected_frames)
    return xyz


def write_replicate(
    path: Path,
    top: md.Topology,
    sel: Selection,
    stride: int,
    name: str,
    atom14_path: Path,
    ca_path: Path,
    expected_frames: int | None = None,
) -> int:
    """Stream one replicate into its atom14 (float16) and C-alpha (float32) ``.npy`` files; return the frames kept.

    Chunks go into growing ``.npy`` files whose headers are written last, so memory holds one chunk at a time.
    """
    n_res = len(sel.ca)
    n_kept = 0
    with open(atom14_path, "wb") as a14, open(ca_path, "wb") as ca:
        header_bytes = _reserve_header(a14), _reserve_header(ca)
        for xyz in iter_replicate(path, top, sel, stride, name):
            a14.write(gather_atom14(xyz, sel.atom14).astype(np.float16).tobytes())
            ca.write(np.ascontiguousarray(xyz[:, sel.ca], np.float32).tobytes())
            n_kept += len(xyz)
        _write_header(a14, header_bytes[0], np.float16, (n_kept, n_res, 14, 3))
        _write_header(ca, header_bytes[1], np.float32, (n_kept, n_res, 3))
    _check_frames(path, name, n_kept, stride, expected_frames)
    return n_kept


HEADER_BYTES = 128  # a .npy version 1 header padded to 128 bytes holds any shape of four dimensions


def _reserve_header(fh) -> int:
    fh.write(b"\0" * HEADER_BYTES)
    return HEADER_BYTES


def _write_header(fh, size: int, dtype: type, shape: tuple[int, ...]) -> None:
    """Write the ``.npy`` header for ``shape`` into the ``size`` bytes reserved at the start of ``fh``."""
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": shape}
    text = repr(header).encode("latin1")
    pad = size - len(np.lib.format.MAGIC_PREFIX) - 2 - 2 - len(text) - 1
    fh.seek(0)
    fh.write(np.lib.format.magic(1, 0) + (len(text) + pad + 1).to_bytes(2, "little") + text + b" " * pad + b"\n")


def naive_read_replicate(path: Path, top_path: Path, stride: int) -> np.ndarray:
    """The naive path kept for benchmarks and tests: load every atom, then select, superpose, stride."""
    traj = md.load(str(path), top=str(top_path))
    heavy = [
        a.index for a in traj.topology.atoms if a.element.symbol not in ("H", "VS") and standard_residue(a.residue.name)
    ]
    traj = traj.atom_slice(heavy)
    traj.superpose(traj, 0)
    return traj.xyz[::stride] * NM_TO_ANGSTROM


def process_protein(
    root: Path,
    name: str,
    out_dir: Path,
    stride: int,
    replicates: list[int] | None = None,
    expected_frames: int | None = None,
) -> list[dict]:
    """Write ``out_dir/{name}/`` (atomically) and return one metadata row per replicate."""
    root, out_dir = Path(root), Path(out_dir)
    top_path = topology_path(root, name)
    if not top_path.exists():
        raise InputError(top_path, f"protein {name}: topology missing")
    paths = require_replicates(root, name, replicates) if replicates else replicate_paths(root, name)
    if not paths:
        raise InputError(
            root / name, f"protein {name}: no replicate trajectories ({name}_prod_R1_fit.xtc or {name}_R1.xtc)"
        )
    top = load_topology(top_path, name)
    sel = select_atoms(top, top_path, name)
    rows = []
    with atomic_path(out_dir / name) as tmp:
        tmp.mkdir()
        for rep, path in sorted(paths.items()):
            n_frames = write_replicate(
                path,
                top,
                sel,
                stride,
                name,
                tmp / atom14_name(name, rep, stride),
                tmp / ca_name(name, rep),
                expected_frames,
            )
            rows.append(
                {
                    "name": name,
                    "replicate": rep,
                    "n_res": len(sel.ca),
                    "n_frames": n_frames,
                    "n_heavy_atoms": len(sel.atom_indices),
                    "stride": stride,
                    "source_file": path.name,
                    "sequence": sel.sequence,
                }
            )
    return rows


@contextlib.contextmanager
def _bare_main():
    """Hide ``__main__`` while spawning workers.

    Spawned workers re-import the parent's ``__main__``; under Snakemake that is the rule's
    script, which would run the rule again (and fail on the missing ``snakemake`` object).
    """
    saved = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = saved


def _process_one(args: tuple) -> tuple[str, list[dict] | None, str | None]:
    name = args[1]
    try:
        return name, process_protein(*args), None
    except InputError as err:
        return name, None, str(err)


def preprocess_all(
    root: Path,
    names: list[str],
    out_dir: Path,
    stride: int,
    workers: int = 1,
    replicates: dict[str, list[int]] | list[int] | None = None,
    expected_frames: int | None = None,
) -> tuple[list[dict], dict[str, str]]:
    """Process every protein (``workers`` processes); return metadata rows and ``{name: error}``.

    One protein's bad input never stops the others; the caller decides whether errors are fatal.
    """

    def reps(name: str) -> list[int] | None:
        return replicates.get(name) if isinstance(replicates, dict) else replicates

    jobs = [(root, name, out_dir, stride, reps(name), expected_frames) for name in names]
    if workers > 1 and len(jobs) > 1:
        # spawn, not fork: mdtraj's OpenMP runtime deadlocks in a child forked after it ran in the parent
        context = multiprocessing.get_context("spawn")
        with _bare_main(), ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=context) as pool:
            results = list(pool.map(_process_one, jobs))
    else:
        results = [_process_one(job) for job in jobs]
    rows, errors = [], {}
    for name, protein_rows, error in results:
        if error is not None:
            log.error("%s", error)
            errors[name] = error
        else:
            rows += protein_rows
            log.info(
                "%s: %d replicate(s), %d frames, %d residues",
                name,
                len(protein_rows),
                protein_rows[0]["n_frames"],
                protein_rows[0]["n_res"],
            )
    return rows, errors
