"""Geo-NeW: structure-preserving learning improves geometry generalisation in neural PDEs (Shaffer et al.,
ICML 2026, arXiv 2602.02788).

Learned partition-of-unity reduced spaces with Whitney-form fluxes and a monotone learned constitutive law
(solved by Newton, so the coarse conservation law holds to solver tolerance) against a transformer that
regresses the solution directly, on deformed domains generated with scikit-fem.
"""
