"""Stage: run the feed-forward pipeline and the closed loop on every noisy image; one row per (image, dose,
method) in ``reconstructions.parquet`` (template, a, theta, ratio, expert, retries, verified)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from repro.papers.automat.controller import EnergyModel, closed_loop, feed_forward
from repro.workflow.io import InputError, atomic_path, read_json
from repro.workflow.progress import Progress


def main(job) -> None:
    settings = job.params.settings
    imaging = settings["imaging"] | settings["denoise"]
    cfg = settings["controller"]
    energies = EnergyModel(read_json(job.input.energies)["templates"])
    with np.load(job.input.images) as z:
        if "noisy" not in z.files:
            raise InputError(job.input.images, "no 'noisy' images")
        noisy, doses, names = z["noisy"], z["doses"], [str(n) for n in z["names"]]
    rows = []
    recorded = np.isfinite(noisy).all(axis=(2, 3))  # a benchmark image exists at its own dose only
    progress = Progress("automat reconstruct", total=int(recorded.sum()), unit="images")
    with threadpool_limits(1):  # many tiny matrix products: BLAS threads only add contention
        for i in range(noisy.shape[0]):
            for k, dose in enumerate(doses):
                if not recorded[i, k]:
                    continue
                counts = noisy[i, k]
                ff = feed_forward(counts, names, imaging, cfg)
                loop = closed_loop(counts, names, imaging, cfg, energies)
                for method, r in (("feed_forward", ff), ("closed_loop", loop)):
                    rows.append({"image": i, "dose": float(dose), "method": method} | {key: r.get(key) for key in
                                ("template", "a", "theta", "ratio", "expert", "retries", "verified")})  # fmt: skip
                progress.update()
    with atomic_path(job.output.reconstructions) as tmp:
        pd.DataFrame(rows).to_parquet(tmp, index=False)
