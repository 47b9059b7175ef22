"""AutoMat: physics-guided agentic reconstruction of crystal structures from STEM images (ICML 2026 poster 63827).

Simulated HAADF-STEM images of 2-D monolayers (incoherent Z^1.7 forward model, Poisson dose noise) are
turned back into structures by pattern-adaptive denoising, a symmetry-constrained lattice fit, species
assignment from column intensities, and, in the closed loop, verification (re-rendering + MLIP energy)
with rollback to template-retrieval hypotheses; a feed-forward pipeline without the loop is the baseline.
"""
