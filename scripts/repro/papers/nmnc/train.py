"""Stage ``nmnc_train``: per seed, backprop pre-training and the manifold measurements on it (captured
Jacobian energy, principal angles, gradient cosines of VNC / NMNC / random-subspace estimates against the
true gradient at several perturbation budgets), then learning from scratch with each method at an equal
perturbation budget; a width sweep of the activity's dimension; the estimator's unbiasedness check."""

from __future__ import annotations

import logging

import numpy as np
import torch
from threadpoolctl import threadpool_limits

from repro.learning.smallnets import MLP, fit, predict
from repro.learning.training import epoch_rng, train
from repro.metrics.learning import accuracy
from repro.papers.nmnc import nc
from repro.papers.nmnc.data import load, write_data_manifest
from repro.papers.nmnc.learning import NoiseCorrelationMLP, forward_passes
from repro.papers.nmnc.rnn import RowRNN, as_rows, measure
from repro.workflow.device import pick_device
from repro.workflow.io import write_json

log = logging.getLogger(__name__)


def make_mlp(n_in: int, section: dict, seed: int, hidden: list[int] | None = None) -> MLP:
    torch.manual_seed(seed)
    return MLP(n_in, hidden or section["model"]["hidden"], 10, activation=section["model"]["activation"])


def backprop(net: MLP, data, s: dict, epochs: int, seed: int, desc: str, device) -> None:
    """Backprop training with the pretraining settings (on ``device``), leaving the network on the CPU."""
    p = s["pretrain"]
    fit(
        net,
        data["train"].x,
        data["train"].y,
        loss="ce",
        epochs=epochs,
        batch_size=p["batch_size"],
        lr=p["lr"],
        seed=seed,
        desc=desc,
        device=device,
    )
    net.cpu()


def activity(net: MLP, x: np.ndarray) -> list[np.ndarray]:
    with torch.no_grad():
        return [a.numpy() for a in net.activations(torch.as_tensor(x))]


def jacobians(net: MLP, x: np.ndarray) -> list[np.ndarray]:
    """d logits / d x_l per sample and hidden layer: (N, 10, n_l) each."""
    out = []
    acts = [a.detach() for a in net.activations(torch.as_tensor(x))]
    for li in range(len(acts)):
        a = acts[li].clone().requires_grad_(True)
        h = a
        for layer in net.hidden_layers[li + 1 :]:
            h = net.act(layer(h))
        logits = net.head(h)
        rows = [torch.autograd.grad(logits[:, c].sum(), a, retain_graph=True)[0] for c in range(logits.shape[1])]
        out.append(torch.stack(rows, dim=1).numpy())
    return out


def alignment(net: MLP, data, s: dict) -> dict:
    """Per hidden layer: rho_k for the activity PCs and a random subspace, principal cosines, dimension."""
    x = data["train"].x
    acts, jac = activity(net, x), jacobians(net, x[: s["manifold"]["jacobian_samples"]])
    layers = []
    for a, j in zip(acts, jac):
        n = a.shape[1]
        rho = {str(k): nc.captured_energy(j, nc.pca_basis(a, k)) for k in s["manifold"]["ks"]}
        rand = {str(k): nc.captured_energy(j, nc.random_basis(n, k).double().numpy()) for k in s["manifold"]["ks"]}
        k = s["manifold"]["k"]
        layers.append(
            {
                "n": n,
                "rho": rho,
                "rho_random": rand,
                "principal_cosines": nc.principal_cosines(j, nc.pca_basis(a, k)).tolist(),
                "participation_ratio": nc.participation_ratio(a),
                "twonn": nc.twonn_dimension(a),
            }
        )
    return {"layers": layers}


def gradient_cosines(net: MLP, data, s: dict, generator_seed: int) -> dict:
    """Median over batches of the median per-sample cosine (activation space) and of the batch weight-space
    cosine, per layer, method and perturbation budget, at the pre-trained network."""
    p = s["perturb"]
    x_all, y_all = torch.as_tensor(data["train"].x), torch.as_tensor(data["train"].y)
    acts_train = activity(net, data["train"].x)
    k = s["manifold"]["k"]
    torch.manual_seed(generator_seed)
    order = torch.randperm(len(x_all))
    results: dict = {}
    wrapper = NoiseCorrelationMLP(net, k)
    for b in range(p["batches"]):
        idx = order[b * p["batch_size"] : (b + 1) * p["batch_size"]]
        x, y = x_all[idx], y_all[idx]
        acts = [a.detach() for a in net.activations(x)]
        inputs = [x, *acts[:-1]]
        for li in range(len(acts)):
            a = acts[li].clone().requires_grad_(True)
            true = torch.autograd.grad(wrapper._loss_above(li, y)(a).sum(), a)[0]
            deriv = 1 - acts[li] ** 2 if s["model"]["activation"] == "tanh" else (acts[li] > 0).to(x.dtype)
            true_w = ((deriv * true).T @ inputs[li]).flatten()
            bases = {
                "vnc": None,
                "nmnc": torch.as_tensor(nc.pca_basis(acts_train[li], k), dtype=torch.float32),
                "random": nc.random_basis(acts[li].shape[1], k),
            }
            for method, basis in bases.items():
                for budget in p["budgets"]:
                    est = nc.estimate_activity_gradient(wrapper._loss_above(li, y), acts[li], budget, p["sigma"], basis)
                    est_w = ((deriv * est).T @ inputs[li]).flatten()
                    entry = results.setdefault(f"{li}/{method}/{budget}", {"activation": [], "weight": []})
                    entry["activation"].append(float(torch.median(nc.cosine(est, true))))
                    entry["weight"].append(float(nc.cosine(est_w[None], true_w[None])[0]))
    return {key: {kind: float(np.median(v)) for kind, v in entry.items()} for key, entry in results.items()}


def learn(method: str, data, s: dict, seed: int, device=None) -> dict:
    """Train from scratch with one method; per-epoch validation accuracy, final test accuracy, forward passes."""
    c = s["learn"]
    net = make_mlp(data["train"].x.shape[1], s, seed)
    model = NoiseCorrelationMLP(net, c["k"], c["ema"])
    x, y = torch.as_tensor(data["train"].x), torch.as_tensor(data["train"].y)
    xv, yv = data["val"].x, data["val"].y
    n = len(x)

    def batches(epoch: int):
        order = torch.as_tensor(epoch_rng(seed, epoch).permutation(n))
        for start in range(0, n, c["batch_size"]):
            idx = order[start : start + c["batch_size"]]
            yield x[idx], y[idx]

    def objective(m, batch):
        return m.surrogate(*batch, method, c["n_perturb"], c["sigma"], c["refresh"])

    def validate(m) -> float:
        return 1.0 - accuracy(predict(m, xv), yv)

    opt = torch.optim.Adam(net.parameters(), lr=c["lr"])
    result = train(
        model,
        objective,
        batches,
        epochs=c["epochs"],
        optimizer=opt,
        validate=validate,
        seed=seed,
        desc=f"nmnc {method} seed {seed}",
        keep_last=True,
        device=device,
    )
    model.cpu()
    per_update = forward_passes(method, len(net.hidden_layers), c["n_perturb"])
    return {
        "val_accuracy": [1.0 - h["val"] for h in result.history],
        "forward_passes": [per_update * n * (e + 1) for e in range(len(result.history))],
        "test_accuracy": accuracy(predict(model, data["test"].x), data["test"].y),
        "test_correct": correct(model, data["test"]),
    }


def correct(model, split) -> list[int]:
    """Per test item: 1 where ``model`` classifies it right (the learning checks' paired errors)."""
    return (predict(model, split.x).argmax(1) == split.y).astype(int).tolist()


def recurrent(data, s: dict, seed: int, device) -> dict:
    """Backprop-train the row-by-row RNN, then its manifold measurements (repro.papers.nmnc.rnn)."""
    r, p = s["rnn"], s["pretrain"]
    rows = {name: as_rows(split.x, s["source"]) for name, split in data.items()}
    torch.manual_seed(seed)
    model = RowRNN(rows["train"].shape[2], r["hidden"])
    fit(
        model,
        rows["train"],
        data["train"].y,
        loss="ce",
        epochs=r["epochs"],
        batch_size=p["batch_size"],
        lr=p["lr"],
        seed=seed,
        desc=f"nmnc rnn seed {seed}",
        device=device,
    )
    model.cpu()
    torch.manual_seed(seed)
    out = measure(model, rows["train"], data["train"].y, s)
    hits = (predict(model, rows["test"]).argmax(1) == data["test"].y).astype(int).tolist()
    return out | {"test_accuracy": accuracy(predict(model, rows["test"]), data["test"].y), "test_correct": hits}


def unbiased_check(s: dict, seed: int) -> float:
    """Cosine of the VNC estimate on a linear readout (squared error) with the true gradient."""
    u = s["unbiased"]
    gen = torch.Generator().manual_seed(seed)
    w = torch.randn(10, u["width"], generator=gen)
    x, t = torch.randn(1, u["width"], generator=gen), torch.randn(1, 10, generator=gen)
    torch.manual_seed(seed)
    est = nc.estimate_activity_gradient(lambda a: 0.5 * ((a @ w.T - t) ** 2).sum(1), x, u["n_perturb"], u["sigma"])
    true = (x @ w.T - t) @ w
    return float(nc.cosine(est, true)[0])


def main(job) -> None:
    with threadpool_limits(limits=job.threads):  # many small eigendecompositions: extra BLAS threads only contend
        run_all(job)


def run_all(job) -> None:
    s = job.params.settings
    device = pick_device(job.params.device)
    data, inputs = load(s, job.input.digits)
    n_in = data["train"].x.shape[1]
    runs = []
    for seed in s["seeds"]:
        p = s["pretrain"]
        net = make_mlp(n_in, s, seed)
        backprop(net, data, s, p["epochs"], seed, f"nmnc bp pretrain seed {seed}", device)
        run = {
            "seed": seed,
            "pretrained_test_accuracy": accuracy(predict(net, data["test"].x), data["test"].y),
            "pretrained_test_correct": correct(net, data["test"]),
            "alignment": alignment(net, data, s),
            "cosines": gradient_cosines(net, data, s, seed),
            "learning": {m: learn(m, data, s, seed, device) for m in s["learn"]["methods"]},
        }
        widths = {}
        for width in s["widths"]["widths"]:
            wide = make_mlp(n_in, s, seed, hidden=[width] * len(s["model"]["hidden"]))
            backprop(wide, data, s, s["widths"]["epochs"], seed, f"nmnc width {width} seed {seed}", device)
            acts = activity(wide, data["train"].x)
            widths[str(width)] = {
                "participation_ratio": [nc.participation_ratio(a) for a in acts],
                "twonn": [nc.twonn_dimension(a) for a in acts],
                "test_correct": correct(wide, data["test"]),
            }
        run["widths"] = widths
        run["rnn"] = recurrent(data, s, seed, device)
        runs.append(run)
        log.info("seed %s done", seed)
    write_json(
        job.output.runs,
        {
            "runs": runs,
            "unbiased_cosine": unbiased_check(s, s["seeds"][0]),
            "n_train": len(data["train"].y),
            "n_in": n_in,
            "test_labels": data["test"].y.tolist(),
            "prior_class": int(np.argmax(np.bincount(data["train"].y))),
        },
    )
    write_data_manifest(job.output.manifest, s["source"], inputs)
