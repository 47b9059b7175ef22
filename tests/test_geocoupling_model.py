"""The two-modality co-design model: members independent, times on their curves, sampling complete and seeded."""

import numpy as np
import torch
import yaml

from repro.papers.geocoupling import gpu_probe
from repro.papers.geocoupling.model import CoDesigner, loss, sample, training_times
from repro.papers.geocoupling.windows import AMINO, MASK, feature_size


def _model(seeds):
    return CoDesigner(seeds, 6, feature_size(6), 16, 2)


def test_members_share_nothing_and_equal_seeds_start_equal():
    model = _model([0, 0, 1])
    w = model.net.layers[0].weight
    assert torch.equal(w[0], w[1]) and not torch.equal(w[0], w[2])
    seq = torch.randint(0, len(AMINO), (3, 5, 6))
    x = torch.randn(3, 5, feature_size(6))
    t = torch.full((3, 5), 0.5)
    loss(model, seq, x, t, t)[2].backward()
    assert all(p.grad[:2].abs().max() == 0 and p.grad[2].abs().max() > 0 for p in model.parameters())


def test_training_times_follow_each_members_coupling():
    alpha = torch.tensor([1.0, 3.0, 1.0])
    random = torch.tensor([False, False, True])
    jitter = torch.tensor([0.0, 0.05, 0.0])
    s, t_struct, t_seq = training_times(alpha, random, jitter, 4000, torch.Generator().manual_seed(0))
    assert torch.equal(t_struct[0], s[0]) and torch.equal(t_seq[0], s[0])
    assert (t_seq[1] - s[1] ** 3).abs().max() <= 0.05 + 1e-6 and (t_struct[1] - s[1]).abs().max() <= 0.05 + 1e-6
    corr = np.corrcoef(t_struct[2].numpy(), t_seq[2].numpy())[0, 1]
    assert abs(corr) < 0.06  # independent uniform times for the random coupling


def test_flow_loss_is_zero_for_the_exact_velocity_at_the_data_end():
    """At t_struct = 1 and t_seq = 1 nothing is masked and x_t = x1: a model returning x1 - x0 has zero loss."""

    class Exact(torch.nn.Module):
        def forward(self, seq, x, t_struct, t_seq):
            return torch.zeros(*seq.shape, len(AMINO)), self.v

    model = Exact()
    x1 = torch.randn(1, 4, 10)
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(x1.shape, generator=torch.Generator().manual_seed(0))
    model.v = x1 - x0
    out = loss(model, torch.zeros(1, 4, 6, dtype=torch.long), x1, torch.ones(1, 4), torch.ones(1, 4), gen)
    assert out.item() == 0.0


def test_sampling_reveals_every_token_and_is_seeded():
    model = _model([0, 1])
    alpha = torch.tensor([0.5, 2.0])
    a = sample(model, alpha, 8, 5, torch.Generator().manual_seed(3))
    b = sample(model, alpha, 8, 5, torch.Generator().manual_seed(3))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert a[0].max() < len(AMINO) and not (a[0] == MASK).any() and a[1].shape == (2, 8, feature_size(6))


def test_gpu_probe_builds_a_training_step_on_the_cpu(repo):
    section = yaml.safe_load((repo / "config/config.yaml").read_text())["papers"]["geocoupling"]
    model, make_batch, step_loss = gpu_probe.build(section, torch.device("cpu"))
    value = step_loss(model, make_batch(2))
    value.backward()
    assert torch.isfinite(value) and all(p.grad is not None for p in model.parameters())
