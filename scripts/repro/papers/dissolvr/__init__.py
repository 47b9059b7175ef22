"""DISSOLVR: interpretable, fast aqueous and organic solubility prediction (ICML 2026, OpenReview TwptiGypFR).

Physically grounded descriptors (RDKit 2-D, a surface/electrostatic block, Joback group-contribution
estimates, Abraham-type descriptors), a gradient-boosted tree model and exact TreeSHAP attributions,
compared with refit ESOL and a random forest on Morgan fingerprints under random and scaffold splits.
"""
