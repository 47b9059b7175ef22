"""SurvFD / SurvSHAP-IQ: functional decomposition and time-dependent Shapley interactions of survival models
(Langbein et al., ICML 2026, arXiv 2602.16505).

Exact SurvSHAP-IQ (Moebius transform and k-SII of the time-indexed coalition game, enumerated over all 2^p
coalitions) on ground-truth simulated hazards whose decomposition is known in closed form, on scikit-survival
models fitted to the simulated data, and on ACTG 320 and GBSG2 shipped in scikit-survival.
"""
