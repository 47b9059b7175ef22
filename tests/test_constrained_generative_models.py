"""The two generative stacks: finite losses, exact flow inversion, seeded sampling, the GPU probe."""

import torch
import yaml

from repro.papers.constrained_generative import gpu_probe
from repro.papers.constrained_generative.models import build
from repro.papers.constrained_generative.train import perturbed

CFG = {
    "ddpm": {"hidden": 16, "layers": 2, "steps": 10, "beta": [1e-4, 0.2]},
    "flow": {"hidden": 8, "layers": 1, "couplings": 4},
}


def test_flow_inverts_exactly_and_its_log_density_integrates_the_change_of_variables():
    flow = build("flow", [0, 1], 3, CFG["flow"])
    with torch.no_grad():
        for p in flow.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=torch.Generator().manual_seed(2)))
    x = flow.sample(50, torch.Generator().manual_seed(0))
    z, logdet = flow(x)
    torch.manual_seed(0)
    expected = torch.randn(2, 50, 3)
    torch.testing.assert_close(z, expected, atol=1e-4, rtol=1e-4)
    jac = torch.autograd.functional.jacobian(lambda v: flow(v.view(2, 1, 3))[0].reshape(-1), x[:, :1].reshape(-1))
    blocks = torch.stack([jac[3 * m : 3 * m + 3, 3 * m : 3 * m + 3] for m in range(2)])
    torch.testing.assert_close(torch.logdet(blocks), logdet[:, 0], atol=1e-4, rtol=1e-4)


def test_ddpm_loss_and_seeded_sampling():
    ddpm = build("ddpm", [0, 1, 2], 3, CFG["ddpm"])
    loss = ddpm.loss(torch.randn(3, 8, 3))
    assert loss.shape == (3,) and torch.isfinite(loss).all()
    a = ddpm.sample(5, torch.Generator().manual_seed(4))
    assert torch.equal(a, ddpm.sample(5, torch.Generator().manual_seed(4)))


def test_torch_normal_perturbation_stays_in_the_normal_space():
    x = torch.nn.functional.normalize(torch.randn(2, 10, 3), dim=-1)
    basis = x[..., None]  # the sphere's unit normal
    moved = perturbed(x, basis, "normal", 0.1) - x
    torch.testing.assert_close(torch.linalg.cross(moved, x), torch.zeros_like(x), atol=1e-6, rtol=0)
    assert torch.equal(perturbed(x, basis, "raw", 0.1), x)


def test_gpu_probe_builds_a_training_step_on_the_cpu(repo):
    section = yaml.safe_load((repo / "config/config.yaml").read_text())["papers"]["constrained-generative"]
    model, make_batch, loss = gpu_probe.build(section, torch.device("cpu"))
    value = loss(model, make_batch(2))
    value.backward()
    assert torch.isfinite(value) and all(p.grad is not None for p in model.parameters())
