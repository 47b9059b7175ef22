"""CCDB: class-conditional distribution balancing for group-robust classification (Zhao, Li, Zhang; ICML 2026)."""
