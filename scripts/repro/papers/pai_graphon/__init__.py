"""Pruning at initialisation through the lens of graphon limits (Pham, Ta, Tran-Thanh; arXiv 2602.06675).

Masks of Random, Magnitude, SNIP and GraSP pruning of a fresh MLP at growing widths, their empirical
(block-averaged) graphons, the distance between consecutive widths, degree homogeneity, which inputs keep
their edges, and the NTK-target alignment of the pruned network.
"""
