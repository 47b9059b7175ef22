"""Snakemake ``script:`` shim: put the repo's ``scripts/`` first on the path and hand over to repro.workflow.entry.

Going through ``scriptdir`` (not an installed package) makes a rule run the code of the
checkout it belongs to, also inside a per-rule conda env or a container.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "scripts"))  # noqa: F821

from repro.workflow.entry import run  # noqa: E402

run(snakemake)  # noqa: F821
