"""Data sources: one module or package per source, each writing its canonical layout under ``data/<source>/``."""
