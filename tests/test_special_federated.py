"""SPECIAL's federated machinery: the server step, the client partition, and the vectorised population."""

import numpy as np
import pytest
import torch

from repro.learning.smallnets import MLP, Task
from repro.papers.special.federated import (
    Population,
    Protocol,
    Variant,
    dirichlet_partition,
    local_batches,
    segment_residual,
    server_step,
)


def toy_tasks(k: int = 3, n: int = 80, d: int = 6, seed: int = 0) -> list[Task]:
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(d, 3, generator=g)
    out = []
    for t in range(k):
        x = torch.randn(n, d, generator=g) + t
        out.append(Task(x[:60], (x[:60] @ w).argmax(1), x[60:], (x[60:] @ w).argmax(1)))
    return out


def inits(seeds, d=6):
    out = {}
    for s in seeds:
        torch.manual_seed(s)
        out[s] = {k: v.detach().clone() for k, v in MLP(d, [8], 3).named_parameters()}
    return out


def test_server_step_is_the_proximal_minimiser_and_a_convex_combination():
    rng = torch.Generator().manual_seed(0)
    bar = {"w": torch.randn(2, 4, 3, generator=rng)}
    anchor = {"w": torch.randn(2, 4, 3, generator=rng)}
    mu = torch.tensor([0.0, 2.0])
    new = server_step(bar, anchor, mu)
    assert torch.equal(new["w"][0], bar["w"][0])
    # gradient of 1/2||w - bar||^2 + mu/2||w - anchor||^2 vanishes at the step
    grad = (new["w"][1] - bar["w"][1]) + 2.0 * (new["w"][1] - anchor["w"][1])
    assert torch.allclose(grad, torch.zeros_like(grad), atol=1e-6)
    assert np.all(segment_residual(new, bar, anchor) < 1e-6)
    off = {"w": new["w"] + 0.5}
    assert np.all(segment_residual(off, bar, anchor) > 1e-3)


def test_dirichlet_partition_assigns_every_sample_once_with_skew():
    labels = np.repeat(np.arange(5), 40)
    parts = dirichlet_partition(labels, 10, 0.1, np.random.default_rng(0))
    joined = np.sort(np.concatenate(parts))
    assert np.array_equal(joined, np.arange(labels.size))
    classes_per_client = [np.unique(labels[p]).size for p in parts if p.size]
    assert np.mean(classes_per_client) < 5


def test_local_batches_draw_the_same_number_of_steps_for_every_client():
    plans = local_batches([3, 50], steps=4, batch_size=8, rng=np.random.default_rng(0))
    assert [len(p) for p in plans] == [4, 4]
    assert all(b.max() < 3 for b in plans[0]) and all(len(b) == 8 for b in plans[1])


@pytest.fixture(scope="module")
def population():
    tasks = toy_tasks()
    variants = [
        Variant("fedavg", "fedavg"),
        Variant("special_mu0", "special"),
        Variant("special", "special", mu=1.0),
        Variant("fedprox", "fedprox", client_mu=0.5),
    ]
    protocol = Protocol(clients=6, per_round=3, rounds=2, local_epochs=1, batch_size=8, lr=0.2, alpha=0.5)
    result = Population(MLP(6, [8], 3), protocol, variants, [0, 1]).run(tasks, inits([0, 1]))
    return tasks, protocol, variants, result


def test_mu_zero_is_fedavg_bit_for_bit(population):
    _, _, _, result = population
    assert np.array_equal(result.acc[0], result.acc[1])
    assert not np.array_equal(result.acc[0], result.acc[2])


def test_stacked_population_equals_each_run_alone(population):
    tasks, protocol, variants, result = population
    for v, variant in enumerate(variants):
        alone = Population(MLP(6, [8], 3), protocol, [variant], [1]).run(tasks, inits([1]))
        np.testing.assert_allclose(alone.acc[0, 0], result.acc[v, 1], atol=1e-6)
        np.testing.assert_allclose(alone.grad_norm[0, 0], result.grad_norm[v, 1], rtol=1e-4)


def test_variant_rejects_a_server_weight_on_another_method():
    with pytest.raises(ValueError, match="mu"):
        Variant("x", "fedavg", mu=1.0)


def test_domainnet_lists_become_one_task_per_domain(tmp_path):
    from PIL import Image

    from repro.papers.special.tasks import load_tasks
    from repro.workflow.io import InputError

    for d, domain in enumerate(("clipart", "sketch")):
        for split, count in (("train", 3), ("test", 2)):
            lines = []
            for i in range(count):
                rel = f"{domain}/{'zebra' if i % 2 else 'ant'}/{split}_{i}.png"
                (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
                Image.fromarray(np.full((5, 7, 3), 40 * d + i, np.uint8)).save(tmp_path / rel)
                lines.append(f"{rel} {i % 2}")
            (tmp_path / f"{domain}_{split}.txt").write_text("\n".join(lines) + "\n")
    tasks = load_tasks(str(tmp_path), "domainnet", ["clipart", "sketch"], 0, (4, 4))
    assert [len(t.y_train) for t in tasks] == [3, 3] and [len(t.y_test) for t in tasks] == [2, 2]
    assert tasks[0].x_train.shape == (3, 3 * 4 * 4) and tasks[1].y_test.tolist() == [0, 1]
    np.testing.assert_allclose(tasks[1].x_train[1].numpy(), (40 + 1) / 255.0, rtol=1e-6)
    (tmp_path / "sketch/ant/test_0.png").write_bytes(b"not a png")
    with pytest.raises(InputError, match="test_0.png"):
        load_tasks(str(tmp_path), "domainnet", ["clipart", "sketch"], 0, (4, 4))
