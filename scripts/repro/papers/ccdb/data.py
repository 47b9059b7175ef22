"""Stage ``ccdb_data``: Coloured-digits benchmarks from the shared images source, one per bias ratio (one npz,
keys ``rho<ratio>/<split>/<field>``).

Training and validation images (the digits' train and val splits) are each coloured ``copies`` times with
independent draws: class c wears colour c with probability rho, another colour otherwise
(:func:`repro.data.images.derived.coloured_spurious`). Every test image is shown once in each of the ten
colours, so each (class, colour) group holds all test images of its class and colour carries no label
information at test time. Group labels are stored for evaluation and the oracle baselines only.
"""

from __future__ import annotations

import numpy as np

from repro.data.images import read_images
from repro.data.images.derived import PALETTE, coloured_spurious, colourise
from repro.workflow.io import write_npz
from repro.workflow.manifest import file_record, write_manifest


def ratio_key(rho: float) -> str:
    return f"rho{rho:g}"


def build(images, labels, split, rho: float, copies: int, seed: int) -> dict[str, np.ndarray]:
    out = {}
    for k, name in enumerate(("train", "val")):
        x, y = images[split == name], labels[split == name]
        xs, ys = np.concatenate([x] * copies), np.concatenate([y] * copies)
        draw_seed = int(np.random.SeedSequence([seed, k]).generate_state(1)[0])
        rgb, y_out, colour, group = coloured_spurious(xs, ys, rho, seed=draw_seed)
        out |= {f"{name}/x": rgb, f"{name}/y": y_out, f"{name}/bias": colour, f"{name}/group": group}
    x, y = images[split == "test"], labels[split == "test"]
    n_colours = len(np.unique(labels))
    colour = np.repeat(np.arange(n_colours), len(x))
    xs, ys = np.tile(x, (n_colours, 1, 1)), np.tile(y, n_colours)
    out |= {
        "test/x": colourise(xs, PALETTE[colour]),
        "test/y": ys,
        "test/bias": colour,
        "test/group": ys * n_colours + colour,
    }
    return out


def main(job) -> None:
    s = job.params.settings
    digits = read_images(job.input.digits, s["source"])
    arrays = {}
    for rho in s["ratios"]:
        built = build(digits.images, digits.labels, digits.split, rho, s["copies"], s["data_seed"])
        arrays |= {f"{ratio_key(rho)}/{key}": value for key, value in built.items()}
    write_npz(job.output.coloured, arrays)
    write_manifest(
        job.output.manifest,
        source="derived",
        producer="repro.papers.ccdb.data",
        files=[file_record(job.output.coloured, None)],
        licence="derived from the shared images source (see data/images/manifest.json)",
        settings={k: s[k] for k in ("source", "ratios", "copies", "data_seed")},
        packages=["numpy"],
    )
