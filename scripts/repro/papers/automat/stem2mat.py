"""Reader for the AutoMat benchmark (STEM2Mat) folder, into the layout the data stage writes.

STEM2Mat's card lays the benchmark out as ``benchmark/tier{1,2,3}/{img,label,cif_file}/`` plus
``property.csv``: one STEM image per sample (PNG or TIFF) and its ground-truth CIF under the same file stem;
file names encode dose (``dose30000``) and sampling (``sampling0.1``, Å/px). Each sample becomes one ground
truth, whatever its composition (the reconstruction retrieves from no template library): the CIF itself (as
pymatgen writes it back), its reduced formula and lattice constant, and the recorded image resampled to the
pipeline's pixel size, cropped to its field of view and scaled to the expected counts at the file's dose.
Rotation and shift are not part of the labels (NaN). Images are recorded once, at one dose: ``noisy`` holds NaN
at the other doses of the set, which the reconstruct stage skips. A sample without a CIF (no ground truth) is
counted and named (first ten) in the summary the manifest records, with every file read (size in bytes and
sha256). A sample whose image is unreadable, constant or smaller than the pipeline's field of view, or whose CIF
pymatgen cannot read, is refused (:class:`repro.data.refusals.Refusals`: by path, counted, the first ten named in
the log and the summary); more than ``source.max_bad_fraction`` of the samples with a CIF refused stops the reader
with an InputError naming the folder. A file name without a dose stops it at once (the layout is not the card's).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from PIL import Image
from scipy import ndimage

from repro.data.refusals import Refusals
from repro.workflow.io import InputError, sha256

IMAGE_SUFFIXES = (".png", ".tif", ".tiff")
DOSE = re.compile(r"dose[_-]?(\d+(?:\.\d+)?)", re.IGNORECASE)
SAMPLING = re.compile(r"sampling[_-]?(\d+(?:\.\d+)?)", re.IGNORECASE)


def read_cif(cif: Path):
    """The CIF's structure (pymatgen), or an InputError naming the file (problem "not a readable CIF (...)")."""
    from pymatgen.core import Structure

    try:
        return Structure.from_file(cif)
    except (ValueError, KeyError, IndexError, AssertionError) as err:
        raise InputError(cif, f"not a readable CIF ({err})") from err


def recorded_image(path: Path, sampling: float, imaging: dict) -> np.ndarray:
    """The image at the pipeline's pixel size, centre-cropped to its shape, peak-normalised; an InputError whose
    problem before " (" is the reason the reader refuses the sample under."""
    try:
        with Image.open(path) as im:
            image = np.asarray(im.convert("F"), dtype=float)
    except OSError as err:
        raise InputError(path, f"not a readable image ({err})") from err
    image = ndimage.zoom(image, sampling / imaging["pixel"], order=1)
    n = imaging["shape"]
    if min(image.shape) < n:
        raise InputError(path, f"field of view smaller than {n} px ({image.shape} px at {imaging['pixel']} Å/px)")
    y0, x0 = (image.shape[0] - n) // 2, (image.shape[1] - n) // 2
    image = image[y0 : y0 + n, x0 : x0 + n]
    image = image - image.min()
    peak = image.max()
    if not peak > 0:
        raise InputError(path, "the image is constant")
    return image / peak


def read_stem2mat(root: Path, source: dict, imaging: dict) -> tuple[dict, dict]:
    """(arrays in the data stage's layout, a summary of what was read and skipped) from a STEM2Mat folder."""
    from pymatgen.io.cif import CifWriter

    root = Path(root)
    if not root.is_dir():
        raise InputError(root, "STEM2Mat benchmark folder not found (the dataset card's benchmark/ folder)")
    samples, no_cif = [], []
    refusals = Refusals(root, "samples")
    for tier in source.get("tiers", ["tier1", "tier2", "tier3"]):
        folder = root / tier / "img"
        if not folder.is_dir():
            raise InputError(folder, f"tier {tier!r} has no img/ folder")
        for path in sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES):
            cif = root / tier / "cif_file" / f"{path.stem}.cif"
            if not cif.is_file():
                no_cif.append(str(path.relative_to(root)))
                continue
            dose = DOSE.search(path.stem)
            if dose is None:
                raise InputError(path, "file name gives no dose (expected e.g. 'dose30000')")
            sampling = SAMPLING.search(path.stem)
            pixel_size = float(sampling.group(1)) if sampling else float(source["sampling"])
            refusals.seen()
            try:
                crystal = read_cif(cif)
                image = recorded_image(path, pixel_size, imaging)
            except InputError as err:
                refusals.refuse(Path(err.path).relative_to(root), err.problem.split(" (")[0])
                continue
            samples.append((tier, path.name, crystal, float(dose.group(1)), image))
    if not refusals.total:
        raise InputError(root, f"no image with a CIF under the tiers {source.get('tiers')}; without CIF: {no_cif[:10]}")
    refused = refusals.close(source["max_bad_fraction"])
    doses = sorted({s[3] for s in samples})
    n = imaging["shape"]
    noisy = np.full((len(samples), len(doses), n, n), np.nan)
    for i, (*_, dose, image) in enumerate(samples):
        # an uncalibrated image: its peak scaled to a nominal detected fraction of the beam
        fraction = float(source.get("peak_fraction", 0.1)) * image
        noisy[i, doses.index(dose)] = dose * imaging["pixel"] ** 2 * (imaging["background"] + fraction)
    arrays = {
        "truth_cif": np.asarray([str(CifWriter(s[2])) for s in samples]),
        "family": np.asarray([s[2].composition.reduced_formula for s in samples]),
        "a": np.asarray([float(s[2].lattice.a) for s in samples]),
        "theta": np.full(len(samples), np.nan),
        "shift": np.full((len(samples), 2), np.nan),
        "clean": float(source.get("peak_fraction", 0.1)) * np.stack([s[4] for s in samples]),
        "noisy": noisy,
        "doses": np.asarray(doses, float),
        "files": np.asarray([f"{s[0]}/{s[1]}" for s in samples]),
    }
    summary = {
        "samples": len(samples),
        "doses": doses,
        "compositions": sorted({s[2].composition.reduced_formula for s in samples}),
        "skipped": {"no_cif": len(no_cif)},
        "skipped_first": no_cif[:10],
        "refused": refused,
        "files": {
            rel: {"bytes": (root / rel).stat().st_size, "sha256": sha256(root / rel)}
            for s in samples
            for rel in (f"{s[0]}/img/{s[1]}", f"{s[0]}/cif_file/{Path(s[1]).stem}.cif")
        },
    }
    return arrays, summary
