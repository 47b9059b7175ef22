"""Solvent names as printed in papers and databases, normalised to the paper's three groups.

NMRNet++ embeds solvents as CDCl3 = 1, DMSO-d6 = 2, other = 3 (brief §3); 0 is left for padding.
"""

from __future__ import annotations

import re

GROUP_IDS = {"CDCl3": 1, "DMSO-d6": 2, "other": 3}
_CHLOROFORM = re.compile(r"cdcl3|chloroform|cdcl₃", re.IGNORECASE)
_DMSO = re.compile(r"dmso|dimethyl\s*sulfoxide|\(cd3\)2so|cd3socd3", re.IGNORECASE)


def solvent_group(name: object) -> str:
    """'CDCl3', 'DMSO-d6' or 'other' for a free-text solvent (NMRShiftDB2 prefixes like '0:' allowed)."""
    text = str(name) if isinstance(name, str) else ""
    if _CHLOROFORM.search(text):
        return "CDCl3"
    if _DMSO.search(text):
        return "DMSO-d6"
    return "other"
