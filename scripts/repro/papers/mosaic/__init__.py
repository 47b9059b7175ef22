"""Mosaic (Zhdanov et al., ICML 2026): probabilistic weather forecasting with block-sparse attention.

A transformer whose attention mixes three branches per token (exact attention inside local blocks,
attention between mean-pooled blocks, exact attention to the top-k key blocks chosen by the pooled
scores), made stochastic by learned functional perturbations (a per-member noise vector inside every
feed-forward gate) and trained with the fair CRPS over an ensemble, so that individual members keep
the energy spectrum that an MSE-trained forecast smooths away.
"""
