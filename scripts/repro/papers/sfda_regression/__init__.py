"""DDG-SFDA: discretized density-guided source-free adaptation for regression (ICML 2026 poster 63709)."""
