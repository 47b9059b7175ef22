"""JanusPipe: pipeline-parallel training of conservative machine-learning interatomic potentials (arXiv 2605.18404).

A conservative MLIP (forces = -dE/dr) trains through a double backward, so one micro-batch crosses a
pipeline four times (forward, force backward, and the two halves of the double backward). This package
decomposes a small MLIP into stages with explicit boundary vector-Jacobian products (SymFold's folded
four-phase decomposition), balances the four phases' measured costs over devices (WaveK), simulates
GPipe / 1F1B / Hanayo-like / JanusPipe-like schedules, and runs the folded schedule for real over
torch.distributed (gloo) on CPU.
"""
