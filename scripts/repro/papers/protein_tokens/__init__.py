"""APT: adaptive (global, coarse-to-fine) protein structure tokenization (arXiv 2602.06418)."""
