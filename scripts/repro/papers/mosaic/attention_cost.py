"""Rule entry ``mosaic_attention_cost``: measured forward time of block-sparse against dense attention vs tokens.

Dense attention is timed as PyTorch's fused ``scaled_dot_product_attention`` (flash or memory-efficient
kernels on a GPU, a tiled kernel on the CPU), the baseline the paper measures against: it never holds the
tokens x tokens scores, which at full scale (49,152 tokens, 12 heads, float32) would be 116 GB, twice over
with the softmax, beyond any device. The block-sparse side is the pure-torch reference of the three
branches (repro.papers.mosaic.attention; the paper's Triton kernel is GPU-only), whose largest live tensors,
the selected branch's scores, grow linearly in the tokens (7.2 GB at full scale).
"""

from __future__ import annotations

import time

import numpy as np
import torch
import torch.nn.functional as F

from repro.papers.mosaic.attention import compressed_branch, expand_kv, local_branch, selected_branch
from repro.workflow.device import pick_device
from repro.workflow.io import write_json


def block_sparse(q, k, v, local_block: int, block: int, top_k: int) -> torch.Tensor:
    """The three branches with equal gates (gate computation is a linear layer, the same for both paths)."""
    h = q.shape[1]
    kf, vf = expand_kv(k, h), expand_kv(v, h)
    return (
        local_branch(q, kf, vf, local_block)
        + compressed_branch(q, kf, vf, block)
        + selected_branch(q, k, v, block, top_k)
    ) / 3


def timed(fn, repeats: int, device: torch.device) -> list[float]:
    """Wall times of ``fn`` over ``repeats`` runs after one warm-up."""
    fn()
    times = []
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return times


@torch.no_grad()
def main(job) -> None:
    c = job.params.settings["attention_cost"]
    device = pick_device(job.params.device)
    g = torch.Generator(device=device).manual_seed(job.params.seed)
    rows = []
    for n in c["tokens"]:
        shape_q, shape_kv = (1, c["heads"], n, c["head_dim"]), (1, c["kv_heads"], n, c["head_dim"])
        q = torch.randn(shape_q, generator=g, device=device)
        k, v = (torch.randn(shape_kv, generator=g, device=device) for _ in range(2))
        local = min(c["local_block"], n)
        dense_s = timed(
            lambda: F.scaled_dot_product_attention(q, expand_kv(k, c["heads"]), expand_kv(v, c["heads"])),
            c["repeats"],
            device,
        )
        sparse_s = timed(lambda: block_sparse(q, k, v, local, c["block"], c["top_k"]), c["repeats"], device)
        dense, sparse = float(np.median(dense_s)), float(np.median(sparse_s))
        rows.append(
            {
                "tokens": n,
                "dense_s": dense,
                "block_sparse_s": sparse,
                "speedup": dense / sparse,
                "dense_runs": dense_s,
                "block_sparse_runs": sparse_s,
            }
        )
    write_json(job.output.cost, {"device": str(device), "torch": torch.__version__, "settings": c, "rows": rows})
