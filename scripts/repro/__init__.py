"""Reproductions of ICML 2026 machine-learning-for-science papers, driven by Snakemake.

Shared code is grouped by role: ``repro.workflow`` (the machinery every stage runs in), ``repro.reporting``
(claims, scoreboard, docs, figures), ``repro.learning`` (training loop and shared models) and
``repro.metrics``. Each data source has a module under ``repro.data`` and each paper a package under
``repro.papers.<slug>`` (hyphens in slugs become underscores).
"""

__version__ = "0.1.0"
