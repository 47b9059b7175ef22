"""SynGR: cross-modal synergy for generative recommendation over semantic item IDs (Chen et al., ICML 2026)."""
