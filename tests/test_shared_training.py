"""The shared training loop: resume after a kill gives the same weights; ensembles select per member."""

import torch

from repro.learning.training import fingerprint_of, seed_everything, train


def _problem(seed=0):
    seed_everything(seed)
    x = torch.randn(64, 3)
    y = x @ torch.tensor([1.0, -2.0, 0.5]) + 0.1 * torch.randn(64)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)

    def loss_fn(m, batch):
        idx = batch
        return ((m(x[idx]).squeeze(-1) - y[idx]) ** 2).mean()

    def batches(epoch):
        return list(torch.randperm(64).split(16))

    return model, opt, loss_fn, batches


def test_resume_matches_uninterrupted(tmp_path):
    model, opt, loss_fn, batches = _problem()
    train(model, loss_fn, batches, epochs=20, optimizer=opt)
    reference = [p.detach().clone() for p in model.parameters()]

    ckpt = tmp_path / "ckpt.pt"
    model, opt, loss_fn, batches = _problem()
    train(model, loss_fn, batches, epochs=10, optimizer=opt, checkpoint=ckpt, checkpoint_every=5)
    model, opt, loss_fn, batches = _problem()
    torch.manual_seed(123)  # a fresh process: other RNG state and other initial weights
    torch.nn.init.normal_(model.weight)
    result = train(model, loss_fn, batches, epochs=20, optimizer=opt, checkpoint=ckpt, checkpoint_every=5)
    assert result.resumed_from == 10
    for p, r in zip(model.parameters(), reference):
        assert torch.equal(p, r)


def test_checkpoint_of_other_settings_is_ignored(tmp_path):
    ckpt = tmp_path / "ckpt.pt"
    model, opt, loss_fn, batches = _problem()
    train(model, loss_fn, batches, epochs=5, optimizer=opt, checkpoint=ckpt, fingerprint=fingerprint_of({"lr": 0.05}))
    model, opt, loss_fn, batches = _problem()
    result = train(
        model, loss_fn, batches, epochs=5, optimizer=opt, checkpoint=ckpt, fingerprint=fingerprint_of({"lr": 0.1})
    )
    assert result.resumed_from is None
    assert len(result.history) == 5


class _Ensemble(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(2))


def test_ensemble_keeps_each_members_best_epoch():
    model = _Ensemble()
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    target = torch.tensor([3.0, 1.0])

    def loss_fn(m, _):
        return (m.w - 5.0).pow(2).sum() * 0.0 + (-(m.w.sum()))  # pushes both weights up by 1 per epoch

    def validate(m):
        return (m.w.detach() - target).abs()

    result = train(model, loss_fn, lambda e: [None], epochs=6, optimizer=opt, validate=validate, patience=10)
    assert result.best_epoch == [2, 0]
    assert torch.equal(model.w.detach(), torch.tensor([3.0, 1.0]))


class _SideEffect:
    """Unpickling this object would create a file: what a planted checkpoint in a shared cache could do."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


def test_a_checkpoint_that_unpickles_code_is_refused_not_run(tmp_path):
    planted = tmp_path / "planted.txt"
    ckpt = tmp_path / "ckpt.pt"
    torch.save({"fingerprint": "", "model": _SideEffect(planted)}, ckpt)
    model, opt, loss_fn, batches = _problem()
    result = train(model, loss_fn, batches, epochs=2, optimizer=opt, checkpoint=ckpt)
    assert not planted.exists()
    assert result.resumed_from is None
    # the loop's own checkpoint (RNG states included) loads as weights only
    assert torch.load(ckpt, weights_only=True)["epoch"] == 1
