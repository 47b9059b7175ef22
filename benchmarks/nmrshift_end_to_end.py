"""Wall time of the NMRNet++ embedded default: `snakemake --cores 2 nmrshift --forceall`.

Run from the repository root. Prints the wall time and the CPU time of the whole run (children
included); conformers are cached under data/spectra/conformers, so run once before for a warm cache
or delete that folder for a cold one.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time


def main() -> None:
    cores = sys.argv[1] if len(sys.argv) > 1 else "2"
    start = time.perf_counter()
    subprocess.run(["snakemake", "--cores", cores, "nmrshift", "--forceall", "--quiet"], check=True)
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"cores {cores}: wall {wall:.1f} s, CPU {usage.ru_utime + usage.ru_stime:.1f} s, load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
