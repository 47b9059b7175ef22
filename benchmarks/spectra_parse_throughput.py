"""Parsing throughput of literature 1H/13C text (records per second) against a naive baseline.

Generates N ACS-style records (default 100,000; half 1H, half 13C) with the synthetic renderer and
times :func:`repro.data.spectra.literature.parse_text` over them; the baseline is a plain regex
`findall` of numbers (no validation), an upper bound for any parser that reads the text once.
Usage: python benchmarks/spectra_parse_throughput.py [--records 100000]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from repro.data.spectra.literature import parse_text, render_carbon_text, render_proton_text  # noqa: E402
from repro.data.spectra.molecules import Rejected  # noqa: E402


def records(n: int, seed: int = 0) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        k = int(rng.integers(3, 12))
        if i % 2:
            peaks = [
                (round(float(v), 2), int(h), str(m))
                for v, h, m in zip(rng.uniform(0.5, 9, k), rng.integers(1, 4, k), rng.choice(list("sdtqm"), k))
            ]
            out.append(("1H", render_proton_text(peaks, list(rng.random(k) < 0.2))))
        else:
            out.append(("13C", render_carbon_text([round(float(v), 1) for v in rng.uniform(10, 200, k)])))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=100_000)
    args = parser.parse_args()
    data = records(args.records)
    start = time.perf_counter()
    rejected = 0
    for nucleus, text in data:
        try:
            parse_text(text, nucleus, 0.2)
        except Rejected:
            rejected += 1
    parse_s = time.perf_counter() - start
    number = re.compile(r"-?\d+\.\d+")
    start = time.perf_counter()
    for _, text in data:
        number.findall(text)
    naive_s = time.perf_counter() - start
    print(f"{args.records} records, {rejected} rejected (overlapping random ranges)")
    print(f"parser: {args.records / parse_s:,.0f} records/s ({parse_s:.2f} s)")
    print(f"naive number regex: {args.records / naive_s:,.0f} records/s ({naive_s:.2f} s)")


if __name__ == "__main__":
    main()
