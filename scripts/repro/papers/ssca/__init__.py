"""SSCA: stable spectral copula alignment (reconstructed; see docs/papers/ssca.md)."""
