"""ML attacks on LWE with data repetition and stepwise regression (arXiv 2604.03903; SALSA lineage).

Generated LWE instances with lattice-reduced samples (fpylll), the cruel/cool column split, a batched MLP
distinguisher for the cruel bits trained on N samples repeated r times, the power-law fit of attempts against
N and r, and forward stepwise regression for the cool bits given the cruel ones.
"""
