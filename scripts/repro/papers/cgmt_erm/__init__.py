"""Gaussian-universality breakdown in high-dimensional ERM (Yaakoubi, Louart, Tiomoko, Liao; arXiv 2604.03146).

For convex regularised ERM on non-Gaussian data the test projection theta_hat^T x is predicted to follow the
law of mu^T x (mu = E[theta_hat]) convolved with N(0, tr(C E[x x^T])) (C = Cov[theta_hat]); Gaussian
universality holds only when mu^T x is itself near Gaussian. This package simulates the designs, fits the
estimators, and checks that prediction against the empirical law and against the Gaussian-equivalent one.
"""
