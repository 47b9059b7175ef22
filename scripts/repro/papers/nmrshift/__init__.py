"""NMRNet++: semi-supervised NMR chemical-shift learning from unassigned literature spectra (ICML 2026).

A 3-D molecular transformer predicts per-atom shifts; labelled molecules (NMRShiftDB2) give an
atom-level L1 loss, unassigned literature spectra (NMRexp) a set loss between sorted predictions
and sorted observed shifts, which equals the optimal-assignment cost for convex pair costs.
"""
