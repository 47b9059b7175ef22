"""Stage: LWE instances and their reduced samples in the canonical layout (results/lwe/data/instances.npz).

Keys: orig_A (4n, n), orig_b (k, 4n), orig_e (k, 4n), secrets (k, n) int8, hamming (k,), R_A (N, n) centred,
R_b (k, N), R_norm (N,), sub_rows (N, m) (which originals each reduced row combines), and the checks
``R_mat`` of the first reductions. One matrix A serves every secret (the reduction depends on A only), as in
the lineage's benchmarks. With ``source: verde`` the published VERDE set is read instead (repro.papers.lwe.reader).
"""

from __future__ import annotations

import numpy as np

from repro.papers.lwe.lwe import binary_secret, centre, lwe_samples
from repro.papers.lwe.reader import read_verde
from repro.papers.lwe.reduction import reduce_subset
from repro.workflow.io import atomic_path, sha256, write_json
from repro.workflow.progress import Progress


def generate(settings: dict) -> dict[str, np.ndarray]:
    lw, red = settings["lwe"], settings["reduction"]
    n, q, sigma = lw["n"], lw["q"], lw["sigma"]
    m = int(round(red["subset_fraction"] * n))
    rng = np.random.default_rng([int(settings["data_seed"]), n, q])
    a = rng.integers(0, q, size=(4 * n, n), dtype=np.int64)
    secrets = np.stack([binary_secret(rng, n, h) for h in lw["hamming"] for _ in range(lw["secrets_per_h"])])
    drawn = [lwe_samples(rng, a, s, q, sigma) for s in secrets]
    b, e = np.stack([d[0] for d in drawn]), np.stack([d[1] for d in drawn])
    rs, ras, rbs, rows_used = [], [], [], []
    progress = Progress("lwe reductions", total=red["subsets"], unit="subsets")
    for _ in range(red["subsets"]):
        rows = np.sort(rng.choice(4 * n, m, replace=False))
        r, ra = reduce_subset(a[rows], q, red["omega"], red["lll_delta"], red["bkz_block"])
        rs.append(r)
        ras.append(ra)
        rbs.append(np.mod(b[:, rows] @ r.T, q))
        rows_used.append(np.broadcast_to(rows, (r.shape[0], m)))
        progress.update()
    r_all = np.vstack(rs)
    return {
        "orig_A": a,
        "orig_b": b,
        "orig_e": e,
        "secrets": secrets.astype(np.int8),
        "hamming": secrets.sum(axis=1),
        "R_A": centre(np.vstack(ras), q),
        "R_b": np.hstack(rbs),
        "R_norm": np.linalg.norm(r_all, axis=1),
        "R_mat": r_all,
        "sub_rows": np.vstack(rows_used),
        "params": np.array([n, q, m, red["omega"]], dtype=np.int64),
        "sigma": np.float64(sigma),
    }


def main(job) -> None:
    settings = job.params.settings
    arrays = read_verde(settings["verde_dir"]) if settings["source"] == "verde" else generate(settings)
    with atomic_path(job.output.instances) as tmp:
        np.savez(tmp, **arrays)
    write_json(
        job.output.manifest,
        {
            "source": settings["source"],
            "generator": "repro.papers.lwe.data",
            "settings": settings,
            "files": {"instances.npz": {"sha256": sha256(job.output.instances)}},
        },
    )
