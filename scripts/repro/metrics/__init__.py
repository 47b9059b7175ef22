"""Metrics shared by several papers, each checked in tests against an independent computation:
scalar regression scores, field and nowcasting scores, image quality, classification and continual
learning, protein backbone geometry. numpy (and scipy) only, so evaluate stages need no torch.
"""
