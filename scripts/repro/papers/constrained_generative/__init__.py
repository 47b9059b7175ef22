"""Manifold-aware perturbations for constrained generative modelling (Keegan & Ruthotto, arXiv 2601.23151)."""
