"""NMNC's training step at paper scale for benchmarks/gpu.py: the section's MLP on flattened CIFAR-10-sized
images, updated by manifold noise correlation (the surrogate whose gradient is the NMNC update)."""

from __future__ import annotations

BATCH_SIZE = 128
STAGE = "train"  # one job: every seed's pretraining, learning runs, width sweep and RNN (workflow/rules/nmnc.smk)

# Training images at paper scale. Class folders (``source.folders``, the user's files): CIFAR-10's training set,
# 50,000 of the 60,000 images docs/papers/nmnc.md names (a val/ folder carved from it leaves fewer). The digit
# sources (``source.name`` without folders): their train split from the images data source (MNIST's official
# 50k; the others 0.7 of their images per class, as repro.data.images.build cuts them).
FOLDER_TRAIN_IMAGES = 50_000
DIGITS_TRAIN_IMAGES = {"mnist": 50_000, "mnist_5k": 3_500, "sklearn_digits": 1_258, "mfeat": 1_400}
CLASSES = 10


def build(section: dict, device):
    """(model, batch(size), loss) of one NMNC update with the section's width, k, budget and sigma."""
    import numpy as np
    import torch

    from repro.learning.smallnets import MLP
    from repro.papers.nmnc.learning import NoiseCorrelationMLP

    source = section["source"]
    n_in = int(np.prod(source["size"])) * int(source["channels"])
    learn = section["learn"]
    net = MLP(n_in, section["model"]["hidden"], 10, activation=section["model"]["activation"])
    model = NoiseCorrelationMLP(net, learn["k"], learn["ema"]).to(device)

    def batch(size: int):
        return torch.randn(size, n_in, device=device), torch.randint(0, 10, (size,), device=device)

    def loss(m, b):
        return m.surrogate(*b, "nmnc", learn["n_perturb"], learn["sigma"], learn["refresh"])

    return model, batch, loss


def _inputs(section: dict) -> int:
    size, channels = section["source"]["size"], int(section["source"]["channels"])
    return int(size[0]) * int(size[1]) * channels


def _macs(n_in: int, hidden: list[int]) -> list[int]:
    widths = [n_in, *hidden, CLASSES]
    return [a * b for a, b in zip(widths[:-1], widths[1:])]


def step_flops(n_in: int, hidden: list[int], method: str, n_perturb: int, k: int) -> int:
    """Matmul FLOPs per sample of one update of the MLP by ``method`` (repro.papers.nmnc.learning), as torch's
    FlopCounterMode counts them (checked against it for every method). ``bp``: forward, weight gradients, input
    gradients above the first layer. The noise-correlation methods: a clean forward without gradients, the
    readout's delta rule, and per hidden layer its local update (forward + weight gradient) and ``n_perturb``
    perturbed passes of the layers above; ``nmnc`` / ``random`` add the activity covariance and the projections
    onto the k-dimensional basis (the basis's eigendecomposition or QR is not counted). ``readout``: the clean
    forward and the readout's rule."""
    macs, depth = _macs(n_in, hidden), len(hidden)
    if method == "bp":
        return 6 * sum(macs) - 2 * macs[0]
    flops = 2 * sum(macs[:depth]) + 4 * macs[depth]
    if method == "readout":
        return flops
    for layer in range(depth):
        flops += 4 * macs[layer] + n_perturb * 2 * sum(macs[layer + 1 :])
        if method != "vnc":
            flops += 2 * hidden[layer] ** 2 + 2 * (n_perturb // 2 + 1) * k * hidden[layer]
    return flops


def rnn_flops(rows: int, features: int, hidden: int) -> int:
    """Matmul FLOPs per sample of one backprop step of repro.papers.nmnc.rnn.RowRNN over ``rows`` steps (counted
    as FlopCounterMode does: each step's two matmuls forward and their weight gradients, the state's gradient
    after the first step, the readout)."""
    per_step = features * hidden + hidden * hidden
    return rows * 4 * per_step + (rows - 1) * 2 * hidden * hidden + 6 * hidden * CLASSES


def training_images(section: dict) -> int:
    """Training images of the source at paper scale (:data:`FOLDER_TRAIN_IMAGES`, :data:`DIGITS_TRAIN_IMAGES`)."""
    source = section["source"]
    return FOLDER_TRAIN_IMAGES if source.get("folders") else DIGITS_TRAIN_IMAGES[source["name"]]


def work(section: dict) -> tuple[int, int]:
    """(samples, batch) of the train stage's one job: for each of ``seeds``, over the training images
    (:func:`training_images`), ``pretrain.epochs`` of backprop on the MLP, ``learn.epochs`` of each of
    ``learn.methods``, ``widths.epochs`` of backprop on the MLP at each of ``widths.widths`` (as many layers as
    ``model.hidden``) and ``rnn.epochs`` of backprop on the row RNN (``rnn.hidden``; ``source.size`` rows of
    channels x width features), each counted in probe (NMNC update) samples by its FLOPs per sample over the
    probe's (:func:`step_flops`, :func:`rnn_flops`); batch ``learn.batch_size`` (pretraining and the width sweep
    use ``pretrain.batch_size``). Left out, forward only or on the host, under 1 % of the FLOPs at full.yaml's
    sizes: the gradient-cosine estimates (``perturb``), the Jacobians and activities of the alignment and width
    measurements, the RNN's measurements, validation and test predictions, the eigendecompositions."""
    n_in, hidden, learn = _inputs(section), list(section["model"]["hidden"]), section["learn"]
    probe = step_flops(n_in, hidden, "nmnc", learn["n_perturb"], learn["k"])
    per_image = section["pretrain"]["epochs"] * step_flops(n_in, hidden, "bp", 0, 0)
    per_image += sum(
        learn["epochs"] * step_flops(n_in, hidden, method, learn["n_perturb"], learn["k"])
        for method in learn["methods"]
    )
    per_image += sum(
        section["widths"]["epochs"] * step_flops(n_in, [w] * len(hidden), "bp", 0, 0)
        for w in section["widths"]["widths"]
    )
    rows, cols = section["source"]["size"]
    rnn = section["rnn"]
    per_image += rnn["epochs"] * rnn_flops(int(rows), int(section["source"]["channels"]) * int(cols), rnn["hidden"])
    samples = len(section["seeds"]) * training_images(section) * per_image / probe
    return int(round(samples)), int(learn["batch_size"])
