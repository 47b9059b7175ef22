"""Focusing (working title): view-consistent sparse-voxel training of 3D VAEs with depth-driven voxel carving
in latent space and adaptive zooming (ICML 2026; paper not located, method reconstructed from its short
description on top of TripoSF-style sparse-voxel VAEs)."""
