"""TVS: the Torque Variation Score, distinguishing imitation error from intrinsic motion difficulty (ICML 2026).

TVS measures how much the inverse-dynamics torque of a reference motion changes under small pose perturbations.
The embedded default computes it with MuJoCo on dm-control's CMU humanoid (read from the dm-control wheel) for
generated motions of graded difficulty with injected flaws, and relates it to the tracking error of PD imitation
controllers.
"""
