"""Neural Control: adjoint learning through equilibrium constraints (Tong et al., ICML 2026, arXiv 2605.03288).

A planar discrete elastic rod with clamped ends (repro.papers.neural_control.rod) stands in for the
authors' C++ simulator; controllers of the continuation parameter are trained with adjoint gradients
through the sequence of equilibrium solves, with and without receding-horizon continuation, against
SPSA and CEM at an equal budget of equilibrium solves.
"""
