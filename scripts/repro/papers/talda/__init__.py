"""TALDA: from Lyapunov analysis to algorithm design in two-sided PL minimax optimisation (ICML 2026 poster 63719).

The paper's update rule was not located; this package implements a documented reconstruction
(see methods.talda) and compares it with GDA, alternating GDA, extragradient and optimistic GDA on
generated two-sided Polyak-Lojasiewicz problems whose saddle points are known.
"""
