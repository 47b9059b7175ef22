"""Flower: neural PDE solvers built from multihead warps ("Flowers: A Warp Drive for Neural PDE Solvers",
arXiv 2603.04430, ICML 2026).

Flower-lite (pointwise-predicted displacements, one bilinear sample per head, pointwise mixing, a
multiscale scaffold) against FNO-lite and U-Net-lite at matched parameters on simulated advection and
acoustic waves and on neuraloperator's Burgers trajectories.
"""
