"""NMNC: credit assignment via neural-manifold noise correlation (Kang, Richards, Sabatini; ICML 2026)."""
