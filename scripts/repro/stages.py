"""The declaration of one paper stage, as a paper's rule file writes it (see workflow/rules/common.smk).

Kept in Python, not in a .smk file, because Snakemake's parser reads keywords such as ``input:`` at
the start of a line as rule directives.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Stage:
    """One rule of a paper, as its rule file declares it (see ``stage``)."""

    name: str
    output: dict
    input: dict = field(default_factory=dict)
    entry: str | None = None
    env: str = "core"
    settings: list | None = None
    seed: bool = False
    resources: str | None = None
    params: dict = field(default_factory=dict)
    reported: bool = False
    localrule: bool = False
    constraints: dict = field(default_factory=dict)
