"""PDRF: Physically-guided Data-space Rectified Flow for precipitation nowcasting (ICML 2026 poster 63730).

A data-space rectified flow (the network predicts the clean future sequence, the velocity is induced)
against a velocity-parameterised flow on the same tiny U-Net backbone, with and without the soft
semi-Lagrangian teacher, plus persistence, semi-Lagrangian extrapolation and a deterministic U-Net, on
simulated radar echoes; SEVIR and MeteoNet readers for the paper's scale.
"""
