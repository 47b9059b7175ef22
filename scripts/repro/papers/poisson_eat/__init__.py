"""A Hitchhiker's Guide to Poisson Gradient Estimation (Ibrahim et al., ICML 2026, arXiv 2602.03896).

Reparameterised relaxations of Poisson samples: Exponential Arrival Time (EAT) simulation with the
original sigmoid indicator and the modified (compact-support, cubic) indicator, and the Gumbel-SoftMax
(GSM) relaxation over a truncated count support. The stages check distributional fidelity (moments,
Wasserstein-1 to the Poisson law), gradient quality against the exact Poisson gradient identity, a
Poisson-latent VAE on scikit-learn's digits and a partially observed GLM on simulated spike trains.
"""
