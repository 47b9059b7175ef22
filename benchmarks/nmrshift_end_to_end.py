"""Wall time of the NMRNet++ embedded default: `snakemake --cores 2 nmrshift --forceall`.

Run from the repository root: python benchmarks/nmrshift_end_to_end.py [cores] [--cold]. Training
checkpoints are removed first (a finished checkpoint would turn training into a reload); conformers
stay cached under data/spectra/conformers unless --cold. Prints wall time and CPU time (children included).
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    cores = args[0] if args else "2"
    shutil.rmtree("results/nmrshift/checkpoints", ignore_errors=True)
    if "--cold" in sys.argv:
        shutil.rmtree("data/spectra/conformers", ignore_errors=True)
    start = time.perf_counter()
    subprocess.run(["snakemake", "--cores", cores, "nmrshift", "--forceall", "--quiet"], check=True)
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"cores {cores}: wall {wall:.1f} s, CPU {usage.ru_utime + usage.ru_stime:.1f} s, load average now {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
