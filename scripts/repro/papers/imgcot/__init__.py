"""ImgCoT: chains of thought compressed into a few latent tokens learned from rendered CoT images."""
