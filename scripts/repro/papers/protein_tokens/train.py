"""Stage: train APT (global tokens, nested dropout), the local tokenizer at equal bits and the ablation without
nested dropout on the training windows; decode the held-out windows from every token prefix and shrunk.

Outputs:
- ``outputs/`` (a folder of ``.npy`` arrays, repro.papers.protein_tokens.arrays), per training seed s (the
  run's seed plus each of ``seeds``): ``ca/<variant>/<s>`` decoded C-alpha ``[K, N_heldout, W, 3]`` from the
  first k = 1..K tokens (global variants; the local tokenizer only at k = K), ``codes/<variant>/<s>``
  quantised tokens of every window ``[N, K, c]``, ``shrunk/apt/<s>`` the held-out windows decoded at
  L' = shrink x L from all tokens with ``shrunk_mask``. Everything after training runs in batches of
  ``inference.batch`` windows on the training device and is written batch by batch into arrays created at
  their final size on disk, so memory stays flat in the number of windows;
- training.json: histories, parameter counts, bits per window, and the implementation checks (FSQ grid
  and straight-through gradient, token invariance under rigid motions, torch Kabsch-RMSD against numpy).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from scipy.spatial.transform import Rotation

from repro.learning.fields_training import fit_arrays
from repro.learning.training import fingerprint_of
from repro.metrics.protein_geometry import rmsd
from repro.papers.protein_tokens.arrays import ArrayWriter, batches, open_arrays
from repro.papers.protein_tokens.model import Autoencoder, kabsch_rmsd, prefix_keep, round_ste, training_loss
from repro.workflow.device import pick_device
from repro.workflow.io import atomic_path, write_json

VARIANTS = {"apt": ("global", True), "local": ("local", False), "apt_no_nested": ("global", False)}


def build(variant: str, settings: dict, max_len: int) -> Autoencoder:
    kind, _ = VARIANTS[variant]
    return Autoencoder(kind, settings["model"], max_len, settings["model"].get("decoder", "regression"))


def fit(model: Autoencoder, variant: str, windows: dict, settings: dict, seed: int, checkpoint, device=None):
    """Train on the training windows with repro.learning.training.train (seeded per epoch, resumable)."""
    train = windows["split"] == 0
    nested = VARIANTS[variant][1]
    loss = settings["loss"]
    return fit_arrays(
        model,
        (windows["backbone"][train], windows["mask"][train]),
        lambda m, b: training_loss(m, b, nested, loss["distance_weight"], loss["size_weight"], loss["min_crop"]),
        train_cfg=settings["train"],
        seed=seed,
        checkpoint=checkpoint,
        fingerprint=fingerprint_of({"settings": settings, "variant": variant}, [__file__]),
        desc=f"protein-tokens {variant}",
        device=device,
    )


def _device(model: torch.nn.Module) -> torch.device:
    return next(model.parameters()).device


def _tensors(model: torch.nn.Module, *arrays: np.ndarray) -> list[torch.Tensor]:
    device = _device(model)
    return [torch.from_numpy(np.array(a)).to(device) for a in arrays]  # a copy: memory maps are read-only


@torch.no_grad()
def decode_prefixes(model: Autoencoder, backbone: np.ndarray, mask: np.ndarray, ks: list[int]) -> np.ndarray:
    """Decoded C-alpha ``[len(ks), N, W, 3]`` from the first k tokens, for each k (one batch, on the model's
    device; :func:`stream` calls it per batch)."""
    bb, m = _tensors(model, backbone, mask)
    codes = model.tokenizer(bb, m)
    out = [model.decode(codes, prefix_keep(len(bb), codes.shape[1], k, bb.device), m)[..., 1, :].cpu() for k in ks]
    return torch.stack(out).numpy().astype(np.float32)


def shrink_lengths(mask: np.ndarray, factor: float) -> np.ndarray:
    """L' = round(factor L) residues per window."""
    return np.rint(factor * mask.sum(1)).astype(int)


@torch.no_grad()
def shrink(model: Autoencoder, backbone: np.ndarray, mask: np.ndarray, factor: float, width: int | None = None):
    """Zero-shot shrinking: all tokens decoded at L' = round(factor L) residues (padded to ``width``)."""
    bb, m = _tensors(model, backbone, mask)
    codes = model.tokenizer(bb, m)
    keep = prefix_keep(len(bb), codes.shape[1], codes.shape[1], bb.device)
    lengths = shrink_lengths(mask, factor)
    small = np.zeros((len(bb), int(width or lengths.max())), np.float32)
    for i, n in enumerate(lengths):
        small[i, :n] = 1.0
    (small_t,) = _tensors(model, small)
    shrunk = model.decode(codes, keep, small_t).cpu().numpy()
    return shrunk.astype(np.float32), small


@torch.no_grad()
def codes_of(model: Autoencoder, backbone: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return model.tokenizer(*_tensors(model, backbone, mask)).cpu().numpy()


def stream(model, windows: dict, rows: np.ndarray, batch: int, writer: ArrayWriter, run_seed: int, variant: str,
           settings: dict) -> None:  # fmt: skip
    """Decode every token prefix (and, for APT, the shrunk decode) of the windows ``rows`` (held-out), and
    encode every window, ``batch`` windows at a time, writing into arrays created at their final size."""
    tokens = settings["model"]["tokens"]
    ks = list(range(1, tokens + 1)) if VARIANTS[variant][0] == "global" else [tokens]
    n, width = len(rows), windows["backbone"].shape[1]
    ca = writer.create(f"ca/{variant}/{run_seed}", (len(ks), n, width, 3), np.float32)
    if variant == "apt":
        lengths = shrink_lengths(np.asarray(windows["mask"][rows]), settings["shrink"])
        small_width = int(lengths.max())
        shrunk = writer.create(f"shrunk/apt/{run_seed}", (n, small_width, 3, 3), np.float32)
        small_mask = writer.create("shrunk_mask", (n, small_width), np.float32)
    for part in batches(n, batch):
        bb, mask = np.asarray(windows["backbone"][rows[part]]), np.asarray(windows["mask"][rows[part]])
        ca[:, part] = decode_prefixes(model, bb, mask, ks)
        if variant == "apt":
            shrunk[part], small_mask[part] = shrink(model, bb, mask, settings["shrink"], small_width)
    total = len(windows["split"])
    codes = None
    for part in batches(total, batch):
        block = codes_of(model, np.asarray(windows["backbone"][part]), np.asarray(windows["mask"][part]))
        if codes is None:
            codes = writer.create(f"codes/{variant}/{run_seed}", (total, *block.shape[1:]), block.dtype)
        codes[part] = block


@torch.no_grad()
def implementation_checks(model: Autoencoder, backbone: np.ndarray, mask: np.ndarray, seed: int) -> dict:
    """FSQ on its grid, straight-through gradient = identity, tokens and Kabsch-RMSD under rigid motions."""
    rng = np.random.default_rng([seed, 11])
    fsq = model.tokenizer.fsq
    z = torch.from_numpy(rng.normal(0, 3, (4096, fsq.dim)).astype(np.float32))
    q = fsq(z)
    scaled = q * fsq.half_width
    grid_error = float((scaled - torch.round(scaled)).abs().max())
    in_range = bool(((scaled >= -fsq.half_width) & (scaled <= fsq.levels - 1 - fsq.half_width)).all())
    distinct = [int(torch.unique(scaled[:, i]).numel()) for i in range(fsq.dim)]
    with torch.enable_grad():
        x = torch.from_numpy(rng.normal(0, 3, 1000).astype(np.float32)).requires_grad_(True)
        round_ste(x).backward(torch.ones_like(x))
        ste_error = float((x.grad - 1.0).abs().max())
    rotation = Rotation.random(random_state=rng).as_matrix()
    moved = (backbone @ rotation.T + rng.normal(0, 20, 3)).astype(np.float32)
    bb, m = torch.from_numpy(backbone), torch.from_numpy(mask)
    pre = model.tokenizer.pre_quantised(bb, m)
    pre_moved = model.tokenizer.pre_quantised(torch.from_numpy(moved), m)
    codes_equal = float((model.tokenizer.fsq(pre) == model.tokenizer.fsq(pre_moved)).all(-1).float().mean())
    decoded = model.decode(model.tokenizer(bb, m), prefix_keep(len(bb), pre.shape[1], pre.shape[1]), m)
    ca_pred, ca_true = decoded[..., 1, :], bb[..., 1, :]
    torch_rmsd = kabsch_rmsd(ca_pred, ca_true, m).numpy()
    torch_rmsd_moved = kabsch_rmsd(ca_pred, torch.from_numpy(moved)[..., 1, :], m).numpy()
    numpy_rmsd = np.array([rmsd(ca_pred[i, m[i] > 0].numpy(), ca_true[i, m[i] > 0].numpy()) for i in range(len(bb))])
    return {
        "fsq_max_grid_error": grid_error,
        "fsq_in_range": in_range,
        "fsq_distinct_levels": distinct,
        "fsq_levels": fsq.levels.int().tolist(),
        "ste_max_gradient_error": ste_error,
        "token_max_abs_change_under_rigid_motion": float((pre - pre_moved).abs().max()),
        "token_codes_equal_fraction_under_rigid_motion": codes_equal,
        "kabsch_rmsd_max_change_under_rigid_motion": float(np.max(np.abs(torch_rmsd - torch_rmsd_moved))),
        "kabsch_rmsd_max_diff_torch_vs_numpy": float(np.max(np.abs(torch_rmsd - numpy_rmsd))),
    }


def count_parameters(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def main(job) -> None:
    settings, seed = job.params.settings, int(job.params.seed)
    device = pick_device(job.params.device)
    windows = open_arrays(job.input.windows)
    held = np.flatnonzero(np.asarray(windows["split"]) > 0)
    ckpt_dir = Path(job.output.training).parent / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    report = {"history": {}, "parameters": {}, "checks": {}, "seeds": []}
    with atomic_path(job.output.outputs) as tmp:
        writer = ArrayWriter(tmp)
        train_all(settings, seed, windows, held, ckpt_dir, device, writer, report)
        writer.close()
    write_json(job.output.training, report)


def train_all(settings, seed, windows, held, ckpt_dir, device, writer: ArrayWriter, report: dict) -> None:
    """Every (seed, variant) model: trained on the training windows (held in memory: they are the training
    data), then streamed over every window into ``writer``."""
    max_len, tokens, batch = windows["backbone"].shape[1], settings["model"]["tokens"], settings["inference"]["batch"]
    train = np.asarray(windows["split"]) == 0
    training = {"backbone": np.asarray(windows["backbone"][train]), "mask": np.asarray(windows["mask"][train])}
    training["split"] = np.zeros(len(training["mask"]), np.int8)
    for offset in settings["seeds"]:
        run_seed = seed + int(offset)
        report["seeds"].append(run_seed)
        for variant in settings["variants"]:
            torch.manual_seed(run_seed)
            model = build(variant, settings, max_len)
            ckpt = ckpt_dir / f"{variant}_{run_seed}.pt"
            result = fit(model, variant, training, settings, run_seed, ckpt, device)
            ckpt.unlink(missing_ok=True)
            model.eval()
            report["history"][f"{variant}/{run_seed}"] = result.history
            report["parameters"][variant] = count_parameters(model)
            report["bits_per_window"] = tokens * model.tokenizer.fsq.bits
            stream(model, windows, held, batch, writer, run_seed, variant, settings)
            if variant == "apt" and not report["checks"]:
                first = held[: settings["checks"]["windows"]]
                bb, mask = np.asarray(windows["backbone"][first]), np.asarray(windows["mask"][first])
                report["checks"] = implementation_checks(model.cpu(), bb, mask, run_seed)
