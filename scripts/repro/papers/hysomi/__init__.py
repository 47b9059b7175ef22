"""HySoMi: a neural network maps metagenome traits to the biokinetic parameters of a microbially
explicit soil-carbon model; ecological constraints keep unobserved pools realistic
(Collart et al., ICML 2026, arXiv:2606.20329)."""
