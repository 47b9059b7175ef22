"""BioDynaSpec (Lin et al., ICML 2026): spatio-spectral autoregressive diffusion for protein MD.

A trajectory is cut into windows anchored on a conformation; each window's displacements
are decomposed per residue coordinate by a real Fourier transform (IWFD), and the
spectral coefficients are generated band by band from low to high frequency, each band
by a small diffusion head conditioned on a residue transformer whose attention carries a
learnable Gaussian bias of inter-residue distance (IRFC). Baselines: the same generator
over time steps instead of bands, an MDGen-style flow-matching model over whole windows,
and copying the first frame. Architecture details are our reconstruction from the abstract.
"""
