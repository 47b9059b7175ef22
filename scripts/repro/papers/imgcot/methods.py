"""The methods ImgCoT compares (one LM each), shared by the training stage and the claims.

full_cot comes first: every other method is fine-tuned from it, and L-ImgCoT's step scores come from it.
L-ImgCoT keeps the k = 1 or 2 steps of lowest likelihood; the selection ablations keep a random step or the
first one.
"""

from __future__ import annotations

METHODS = (
    "full_cot",
    "no_cot",
    "text_ae",
    "imgcot",
    "l_imgcot_k1",
    "l_imgcot_k2",
    "l_imgcot_random_k1",
    "l_imgcot_first_k1",
)


def selection(method: str) -> tuple[int, str]:
    """(k, rule) of an L-ImgCoT method name: l_imgcot[_random|_first]_k<k>."""
    k = int(method.rsplit("k", 1)[1])
    rule = "random" if "_random_" in method else "first" if "_first_" in method else "lowest_loglik"
    return k, rule
