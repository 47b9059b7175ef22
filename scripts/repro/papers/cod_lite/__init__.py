"""CoD-Lite: real-time diffusion-based generative image compression (arXiv 2604.12525, ICML 2026).

Small-scale reconstruction: a convolutional analysis transform with a scalar-quantised latent and a learned
factorised entropy model (range-coded with constriction, so the rate is the bits actually written), a
pixel-space conditional convolutional diffusion decoder (multi-step teacher) and a one-step decoder distilled
from it, compression- against generation-oriented pre-training, an MSE autoencoder and JPEG as baselines.
"""
