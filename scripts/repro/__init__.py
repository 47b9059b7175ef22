"""Reproductions of ICML 2026 machine-learning-for-science papers, driven by Snakemake.

Shared pieces live at the top level (io, claims, metrics, training, plotting, config);
each data source has a module under ``repro.data`` and each paper a package under
``repro.papers.<slug>`` (hyphens in slugs become underscores).
"""

__version__ = "0.1.0"
