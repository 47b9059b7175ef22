"""GPO: Gaussian Particle Operator, "From Basis to Basis" (arXiv 2602.21551, ICML 2026).

A lite GPO (learned anisotropic Gaussian test and trial bases, Petrov-Galerkin measurement, attention
across modes) against FNO and a Galerkin transformer on Darcy flow (neuraloperator's shipped samples)
and 2-D Navier-Stokes (the FNO protocol, simulated), across resolutions and on irregular point subsets.
"""
