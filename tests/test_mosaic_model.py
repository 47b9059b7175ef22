"""Mosaic's defining properties: block-sparse attention identities, functional perturbations, token order."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.papers.mosaic.attention import (
    Attention,
    compressed_branch,
    dense_attention,
    expand_kv,
    local_branch,
    select_blocks,
    selected_branch,
)
from repro.papers.mosaic.model import ModelSettings, Mosaic, tile_order
from repro.papers.mosaic.train import fair_crps_loss


def qkv(n=128, h=4, hk=2, d=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(2, h, n, d, generator=g, dtype=torch.float64)
    k = torch.randn(2, hk, n, d, generator=g, dtype=torch.float64)
    v = torch.randn(2, hk, n, d, generator=g, dtype=torch.float64)
    return q, k, v


def test_selection_covering_all_blocks_equals_dense():
    q, k, v = qkv()
    dense = dense_attention(q, expand_kv(k, 4), expand_kv(v, 4))
    torch.testing.assert_close(selected_branch(q, k, v, 16, 128 // 16), dense, atol=1e-12, rtol=0)
    assert (selected_branch(q, k, v, 16, 2) - dense).abs().max() > 1e-3  # a real selection differs


def test_one_local_block_over_the_sequence_equals_dense():
    q, k, v = qkv()
    kf, vf = expand_kv(k, 4), expand_kv(v, 4)
    torch.testing.assert_close(local_branch(q, kf, vf, 128), dense_attention(q, kf, vf), atol=1e-12, rtol=0)


def test_local_blocks_do_not_see_other_blocks():
    q, k, v = qkv()
    kf, vf = expand_kv(k, 4), expand_kv(v, 4)
    base = local_branch(q, kf, vf, 32)
    vf2 = vf.clone()
    vf2[:, :, 32:] += 10.0
    changed = local_branch(q, kf, vf2, 32)
    torch.testing.assert_close(changed[:, :, :32], base[:, :, :32])


def test_compressed_branch_is_attention_between_block_means():
    q, k, v = qkv()
    kf, vf = expand_kv(k, 4), expand_kv(v, 4)
    out = compressed_branch(q, kf, vf, 16)
    pooled = [t.reshape(2, 4, 8, 16, 8).mean(3) for t in (q, kf, vf)]
    manual = dense_attention(*pooled)
    torch.testing.assert_close(out[:, :, ::16], manual)
    torch.testing.assert_close(out[:, :, 5], out[:, :, 0])  # broadcast within a block


def test_selected_blocks_are_top_scoring_and_shared_by_the_group():
    q, k, v = qkv()
    index = select_blocks(q, k, 16, 3, 2)
    assert index.shape == (2, 2, 8, 3)
    qp, kp = q.reshape(2, 4, 8, 16, 8).mean(3), k.reshape(2, 2, 8, 16, 8).mean(3)
    scores = (qp @ expand_kv(kp, 4).transpose(-1, -2)).reshape(2, 2, 2, 8, 8).mean(2)
    expected = scores.argsort(dim=-1, descending=True)[..., :3]
    assert torch.equal(index.sort(-1).values, expected.sort(-1).values)


def test_gated_module_with_selection_gate_only_equals_dense_module():
    torch.manual_seed(0)
    sparse = Attention(32, 4, 2, sparse=True, local_block=32, block=8, top_k=16).double()
    dense = Attention(32, 4, 2, sparse=False, local_block=32, block=8, top_k=16).double()
    dense.load_state_dict(sparse.state_dict())
    sparse.fixed_gates = (0.0, 0.0, 1.0)
    x = torch.randn(2, 128, 32, dtype=torch.float64)
    rope = (torch.ones(128, 4, dtype=torch.float64), torch.zeros(128, 4, dtype=torch.float64))
    torch.testing.assert_close(sparse(x, rope), dense(x, rope), atol=1e-10, rtol=0)


def test_tile_order_makes_blocks_spatially_compact():
    order = tile_order(4, 8, (2, 4))
    assert sorted(order) == list(range(32))
    rows, cols = np.divmod(order[:8], 8)
    assert set(rows) == {0, 1} and set(cols) == {0, 1, 2, 3}


def small_model(noise_dim=4):
    lat = np.linspace(-80, 80, 8)
    lon = np.arange(16) * 22.5
    s = ModelSettings(
        channels=2,
        width=16,
        depth=1,
        heads=2,
        kv_heads=1,
        patch=2,
        tile=(2, 2),
        local_block=8,
        top_k=2,
        noise_dim=noise_dim,
    )
    return Mosaic(s, lat, lon)


def test_members_differ_only_through_the_noise_vector():
    torch.manual_seed(0)
    model = small_model()
    with torch.no_grad():
        for ffn in (b.ffn for b in model.blocks):
            ffn.wz.weight.normal_()
        model.head.weight.normal_(0, 0.1)  # a trained head reads the features (it starts at persistence)
    x = torch.randn(1, 2, 2, 8, 16).repeat(2, 1, 1, 1, 1)
    z = torch.randn(2, 4)
    out = model(x, z)
    assert out.shape == (2, 2, 8, 16)
    assert (out[0] - out[1]).abs().max() > 1e-4
    torch.testing.assert_close(model(x, z[:1].repeat(2, 1))[0], model(x, z[:1].repeat(2, 1))[1])


def test_output_is_periodic_in_longitude():
    """Rolling the input by one local block in longitude rolls the output (no seam at 0/360).

    Positions are switched off (zero statics, identity rotary) so that only the grid treatment remains.
    """
    torch.manual_seed(0)
    model = small_model(noise_dim=0)
    model.static.zero_()
    model.rope_cos.fill_(1.0)
    model.rope_sin.zero_()
    x = torch.randn(1, 2, 2, 8, 16)
    rolled = model(torch.roll(x, 8, dims=-1))
    torch.testing.assert_close(rolled, torch.roll(model(x), 8, dims=-1), atol=1e-5, rtol=1e-5)


def test_fair_crps_loss_matches_metric():
    from repro.papers.mosaic.metrics import crps_fair

    g = torch.Generator().manual_seed(0)
    members, truth = torch.randn(3, 2, 1, 4, 5, generator=g), torch.randn(2, 1, 4, 5, generator=g)
    weights = torch.ones(4, 1)
    expected = crps_fair(members.numpy(), truth.numpy(), member_axis=0).mean()
    assert float(fair_crps_loss(members, truth, weights)) == pytest.approx(expected, rel=1e-6)


def test_the_head_starts_at_persistence():
    """Untrained, the network returns its newest input state: training starts from the trivial forecast."""
    torch.manual_seed(1)
    model = small_model()
    x = torch.randn(2, 2, 2, 8, 16)
    torch.testing.assert_close(model(x, torch.randn(2, 4)), x[:, -1])


def test_checkpointed_blocks_give_the_same_loss_and_gradients_with_less_kept_memory():
    """``checkpoint`` recomputes each block in the backward pass: the same loss and gradients bit for bit,
    while the step's live peak (repro.learning.step_cost) falls."""
    from dataclasses import replace

    from repro.learning.step_cost import count_step

    def step(recompute: bool):
        torch.manual_seed(0)
        model = small_model()
        model.s = replace(model.s, checkpoint=recompute)
        x, z = torch.randn(2, 2, 2, 8, 16), torch.randn(2, 4)
        loss = model(x, z).pow(2).mean()
        loss.backward()
        return loss.detach(), [p.grad.clone() for p in model.parameters()]

    (plain, plain_grads), (recomputed, recomputed_grads) = step(False), step(True)
    assert torch.equal(plain, recomputed)
    assert all(torch.equal(a, b) for a, b in zip(plain_grads, recomputed_grads))

    def build(recompute: bool):
        def probe(section, device):
            torch.manual_seed(0)
            model = small_model().to(device)
            model.s = replace(model.s, checkpoint=recompute)
            return (
                model,
                lambda n: (torch.randn(n, 2, 2, 8, 16, device=device), torch.randn(n, 4, device=device)),
                (lambda m, b: m(*b).pow(2).mean()),
            )

        return probe

    assert count_step(build(True), {}, 64).peak_live_bytes < count_step(build(False), {}, 64).peak_live_bytes
