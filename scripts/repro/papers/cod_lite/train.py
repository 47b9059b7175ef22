"""Stage: train one seed's condition codec, diffusion decoders and one-step student; decode the test images.

1. The condition codec with its MSE decoder: analysis transform (ds x downsampling), vector quantiser with
   2^bits entries (codebook initialised from the first chunk's latents), MSE synthesis; loss MSE + VQ-VAE
   codebook and commitment terms. It is then frozen and shared, so every decoder reads the same bitstream.
2. Two diffusion teachers at an equal budget (``pretrain_epochs`` then ``finetune_epochs`` each, the fine-tune
   conditioned on this codec's indices in both):
   - compression-oriented (CoD): pre-trained conditioned on a *lower-rate* code of the same images (the
     codebook clustered to 2^pretrain_bits entries: a different operating point, as CoD is pre-trained at one
     rate and its one-step codecs are fine-tuned at others);
   - generation-oriented: pre-trained unconditionally (a generic image generator).
3. The one-step student, initialised from the compression-oriented teacher and distilled by distribution
   matching (DMD): a fake-score network (initialised from the teacher) is trained on the student's samples, and
   the student follows the difference of the fake and real (teacher) x-predictions at its noised samples,
   normalised as in DMD; plus an adversarial term from a conditional discriminator (non-saturating GAN loss)
   and an L1 reconstruction term (the paper's stage-1 reconstruction loss without its perceptual networks).
   Student, fake score and discriminator train jointly, one Adam with a parameter group per network (each
   term's gradient reaches only its own network), so the shared training loop resumes it bit for bit.

Training crops stream from the chunked store (crops.zarr) in groups of ``group_chunks`` chunks, shuffled
within the group: memory is flat in the number of crops; conditions are computed per batch by the frozen
codec (no tensor of the whole set exists).

Outputs (seed ``s`` from the wildcard):
- recon s<s>.npz: ``<image>/<decoder>`` uint8 reconstructions of each test image at its own size (decoders
  ``mse``, ``onestep``, ``teacher_<n>`` per sampler step count, ``gen_teacher_<N>``, ``untrained_onestep``
  and ``untrained_teacher_<N>``: the untrained initialisations), ``<image>/bits`` payload bits written,
  ``<image>/tokens``, ``<image>/mismatches`` indices changed by the write -> read round trip,
  ``<image>/denoise/<teacher>`` the held-out conditional denoising loss of each teacher (and of the untrained
  network), ``mean_colour``;
- training s<s>.json: loss histories, parameter counts and the decode timings (per repeat, modes interleaved)
  at ``timing.height`` x ``timing.width``.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from repro.learning.operators import count_parameters
from repro.learning.training import epoch_rng, fingerprint_of, train
from repro.papers.cod_lite import coding, model
from repro.papers.cod_lite.test_images import load_test
from repro.workflow.device import pick_device
from repro.workflow.fields_io import save_arrays
from repro.workflow.io import InputError, write_json


class Codec(nn.Module):
    """Analysis transform, vector quantiser and MSE synthesis, trained together."""

    def __init__(self, cfg: dict):
        super().__init__()
        self.ds, self.bits = cfg["ds"], cfg["bits"]
        self.encoder = model.Encoder(cfg["width"], cfg["latent"], cfg["ds"], cfg["blocks"])
        self.vq = model.VectorQuantiser(cfg["bits"], cfg["latent"])
        self.decoder = model.Synthesis(cfg["width"], cfg["latent"], cfg["ds"], cfg["blocks"])

    @torch.no_grad()
    def indices(self, x: torch.Tensor) -> torch.Tensor:
        return self.vq.indices(self.encoder(x))


def to_tensor(images: np.ndarray) -> torch.Tensor:
    """uint8 (N, H, W, 3) -> float (N, 3, H, W) in [-1, 1]."""
    # in place after the one float copy: a batch costs one float tensor, not three (x / 127.5 - 1 made two more)
    return torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float().div_(127.5).sub_(1.0)


def to_uint8(x: torch.Tensor) -> np.ndarray:
    return ((x.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8).permute(0, 2, 3, 1).cpu().numpy()


class CropStore:
    """The training crops of crops.zarr, read a group of chunks at a time."""

    def __init__(self, path: str | Path):
        from repro.workflow.stores import open_zarr_group

        group = open_zarr_group(path)
        if "crops" not in group:
            raise InputError(path, "has no 'crops' array")
        self.crops = group["crops"]
        if self.crops.ndim != 4 or self.crops.shape[-1] != 3 or self.crops.dtype != np.uint8:
            raise InputError(path, "'crops' must be uint8 (N, crop, crop, 3)")
        self.chunk = int(self.crops.chunks[0])

    def __len__(self) -> int:
        return int(self.crops.shape[0])

    def first(self, count: int) -> np.ndarray:
        return np.asarray(self.crops[: min(count, len(self))])

    def batches(self, batch: int, seed: int, group_chunks: int, device):
        """``batches(epoch)``: chunks in an order from ``epoch_rng``, read ``group_chunks`` at a time and
        shuffled within the group, as tensors in [-1, 1]."""
        n_chunks = math.ceil(len(self) / self.chunk)

        def batches(epoch: int):
            rng = epoch_rng(seed, epoch)
            order = rng.permutation(n_chunks)
            # one buffer refilled for every group: a new block per group (and the list of chunks concatenated
            # into it) left freed blocks of the allocator's heap behind, a step in peak memory with the crops
            block = np.empty((group_chunks * self.chunk, *self.crops.shape[1:]), dtype=np.uint8)
            for g in range(0, n_chunks, group_chunks):
                filled = 0
                for c in np.sort(order[g : g + group_chunks]):
                    part = self.crops[c * self.chunk : (c + 1) * self.chunk]
                    block[filled : filled + len(part)] = part
                    filled += len(part)
                perm = rng.permutation(filled)
                for i in range(0, filled, batch):
                    yield (to_tensor(block[perm[i : i + batch]]).to(device),)

        return batches


def codec_loss(beta: float):
    def loss(codec: Codec, batch) -> torch.Tensor:
        (x,) = batch
        q, _, vq_loss = codec.vq(codec.encoder(x), beta)
        return torch.mean((codec.decoder(q) - x) ** 2) + vq_loss

    return loss


def diffusion_loss(condition):
    """x-prediction loss at logit-normal timesteps, conditioned on ``condition(x)`` (None: unconditional)."""

    def loss(net: model.Denoiser, batch) -> torch.Tensor:
        (x,) = batch
        t = model.lognormal_t(len(x), x.device)
        if condition is None:
            q, mask = torch.zeros(len(x), net.cond.in_channels, 1, 1, device=x.device), 0.0
        else:
            q, mask = condition(x), 1.0
        return torch.mean((net(model.noisy(x, t, torch.randn_like(x)), t, q, mask) - x) ** 2)

    return loss


class Distiller(nn.Module):
    """The one-step student, its fake-score network and the discriminator, trained together."""

    def __init__(self, student: model.Denoiser, fake: model.Denoiser, disc: model.Discriminator):
        super().__init__()
        self.student, self.fake, self.disc = student, fake, disc


def dmd_loss(teacher: model.Denoiser, condition, cfg: dict):
    """Distribution-matching distillation with an adversarial and a reconstruction term (see the module doc)."""
    for p in teacher.parameters():
        p.requires_grad_(False)

    def loss(m: Distiller, batch) -> torch.Tensor:
        (x,) = batch
        q = condition(x)
        n = len(x)
        xs = m.student(torch.randn_like(x), torch.ones(n, device=x.device), q)
        sample = xs.detach()
        t = model.lognormal_t(n, x.device)
        fake_loss = torch.mean((m.fake(model.noisy(sample, t, torch.randn_like(x)), t, q) - sample) ** 2)
        disc_loss = torch.mean(F.softplus(-m.disc(x, q))) + torch.mean(F.softplus(m.disc(sample, q)))
        with torch.no_grad():
            t2 = model.lognormal_t(n, x.device)
            x_t = model.noisy(sample, t2, torch.randn_like(x))
            real, fake = teacher(x_t, t2, q), m.fake(x_t, t2, q)
            weight = 1.0 / (sample - real).abs().mean(dim=(1, 2, 3), keepdim=True).clamp_min(1e-4)
            target = sample - (fake - real) * weight
        dmd = 0.5 * torch.mean((xs - target) ** 2)
        frozen = {k: v.detach() for k, v in m.disc.named_parameters()}
        adversarial = torch.mean(F.softplus(-torch.func.functional_call(m.disc, frozen, (xs, q))))
        reconstruction = torch.mean(torch.abs(xs - x))
        return fake_loss + disc_loss + dmd + cfg["adv_weight"] * adversarial + cfg["rec_weight"] * reconstruction

    return loss


def init_codebook(codec: Codec, crops: np.ndarray, seed: int) -> None:
    """Codebook entries drawn from the latents of the first crops (a data-dependent start: no dead entries)."""
    with torch.no_grad():
        y = codec.encoder(to_tensor(crops))
        flat = y.permute(0, 2, 3, 1).reshape(-1, y.shape[1])
        rng = np.random.default_rng(seed)
        pick = rng.choice(len(flat), size=len(codec.vq.codebook), replace=len(flat) < len(codec.vq.codebook))
        codec.vq.codebook.copy_(flat[torch.from_numpy(pick)] + 1e-3 * torch.randn_like(codec.vq.codebook))


def coarse_code(codebook: torch.Tensor, bits: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The lower-rate code of the compression-oriented pre-training: k-means of the codebook into 2^bits
    centroids; returns (fine index -> coarse index map, centroids)."""
    from scipy.cluster.vq import kmeans2

    data = codebook.detach().double().numpy()
    centroids, labels = kmeans2(data, 2**bits, minit="++", rng=np.random.default_rng(seed), iter=20)
    return torch.from_numpy(labels.astype(np.int64)), torch.from_numpy(centroids).float()


def pad_to(x: torch.Tensor, multiple: int) -> torch.Tensor:
    """Replicate-pad (N, 3, H, W) on the bottom and right to multiples of ``multiple``."""
    h, w = x.shape[-2:]
    return F.pad(x, (0, (-w) % multiple, 0, (-h) % multiple), mode="replicate")


class Trainer:
    """Runs every fit of one seed with its own checkpoint, tied to the settings and this code."""

    def __init__(self, settings: dict, seed: int, ckpt_dir: Path, device):
        self.settings, self.seed, self.ckpt_dir, self.device = settings, seed, ckpt_dir, device

    def fit(self, name: str, net: nn.Module, batches, loss, epochs: int, optimizer) -> list:
        return train(
            net,
            loss,
            batches,
            epochs=epochs,
            optimizer=optimizer,
            checkpoint=self.ckpt_dir / f"s{self.seed}_{name}.pt",
            checkpoint_every=1,
            fingerprint=fingerprint_of([self.settings, name, self.seed], [__file__, model.__file__]),
            desc=f"cod-lite {name} seed {self.seed}",
            seed=self.seed,
            device=self.device,
            keep_last=True,
            precision=self.settings["train"].get("precision", "fp32"),
        ).history


def denoiser(cfg: dict) -> model.Denoiser:
    return model.Denoiser(cfg["width"], cfg["latent"], cfg["ds"], cfg["denoiser_blocks"], cfg["patch"])


def train_seed(store: CropStore, settings: dict, seed: int, ckpt_dir: Path, device):
    """Every network of one seed, and their histories."""
    cfg, tcfg = settings["model"], settings["train"]
    trainer = Trainer(settings, seed, ckpt_dir, device)
    history: dict[str, list] = {}

    def batches(offset: int):
        return store.batches(tcfg["batch"], seed + offset, tcfg["group_chunks"], device)

    def adam(net: nn.Module, lr: float):
        return torch.optim.Adam(net.parameters(), lr=lr)

    torch.manual_seed(seed)
    codec = Codec(cfg)
    init_codebook(codec, store.first(tcfg["batch"] * 4), seed)
    history["codec"] = trainer.fit(
        "codec", codec, batches(0), codec_loss(tcfg["beta"]), tcfg["ae_epochs"], adam(codec, tcfg["lr"])
    )
    codec.eval().to(device)
    for p in codec.parameters():
        p.requires_grad_(False)
    fine_to_coarse, centroids = coarse_code(codec.vq.codebook.cpu(), cfg["pretrain_bits"], seed)
    fine_to_coarse, centroids = fine_to_coarse.to(device), centroids.to(device)

    def target_condition(x: torch.Tensor) -> torch.Tensor:
        return codec.vq.embed(codec.indices(x))

    def coarse_condition(x: torch.Tensor) -> torch.Tensor:
        return centroids[fine_to_coarse[codec.indices(x)]].permute(0, 3, 1, 2)

    nets = {"codec": codec}
    for arm, pre_condition in (("teacher", coarse_condition), ("gen_teacher", None)):
        torch.manual_seed(seed + 1)
        net = denoiser(cfg)
        opt = adam(net, tcfg["lr"])
        history[f"{arm}_pretrain"] = trainer.fit(
            f"{arm}_pretrain", net, batches(1), diffusion_loss(pre_condition), tcfg["pretrain_epochs"], opt
        )
        history[f"{arm}_finetune"] = trainer.fit(
            f"{arm}_finetune", net, batches(2), diffusion_loss(target_condition), tcfg["finetune_epochs"], opt
        )
        nets[arm] = net.eval()
    dcfg = tcfg["distill"]
    teacher = nets["teacher"]
    student, fake = denoiser(cfg), denoiser(cfg)
    student.load_state_dict(teacher.state_dict())
    fake.load_state_dict(teacher.state_dict())
    torch.manual_seed(seed + 2)
    distiller = Distiller(student, fake, model.Discriminator(cfg["disc_width"], cfg["latent"]))
    optimizer = torch.optim.Adam(
        [
            {"params": student.parameters(), "lr": dcfg["lr"]},
            {"params": fake.parameters(), "lr": dcfg["fake_lr"]},
            {"params": distiller.disc.parameters(), "lr": dcfg["disc_lr"], "betas": (0.0, 0.99)},
        ]
    )
    history["distill"] = trainer.fit(
        "distill", distiller, batches(3), dmd_loss(teacher, target_condition, dcfg), dcfg["epochs"], optimizer
    )
    nets["student"] = student.eval()
    torch.manual_seed(seed + 3)
    nets["untrained"] = denoiser(cfg).to(device).eval()
    return nets, history


@torch.no_grad()
def decode_all(nets: dict, x: torch.Tensor, settings: dict, noise_seed: int) -> dict[str, np.ndarray]:
    """Every decoder's reconstruction of one image (1, 3, H, W) and its bitstream round trip."""
    cfg = settings["model"]
    codec = nets["codec"]
    h, w = x.shape[-2:]
    xp = pad_to(x, cfg["ds"])
    idx = codec.indices(xp)[0].cpu().numpy()
    stream = coding.encode(idx, cfg["bits"], h, w)
    back, hh, ww = coding.decode(stream, cfg["bits"], cfg["ds"])
    q = codec.vq.embed(torch.from_numpy(back)[None].to(xp.device))
    noise = torch.randn(xp.shape, generator=torch.Generator().manual_seed(noise_seed)).to(xp.device)
    n = settings["sampler_steps"]
    outs = {
        "mse": codec.decoder(q),
        "onestep": model.sample(nets["student"], q, noise, 1),
        f"gen_teacher_{n}": model.sample(nets["gen_teacher"], q, noise, n),
        "untrained_onestep": model.sample(nets["untrained"], q, noise, 1),
        f"untrained_teacher_{n}": model.sample(nets["untrained"], q, noise, n),
    }
    outs |= {f"teacher_{k}": model.sample(nets["teacher"], q, noise, k) for k in teacher_steps(settings)}
    out = {k: to_uint8(v[..., :h, :w])[0] for k, v in outs.items()}
    for name in ("teacher", "gen_teacher", "untrained"):
        out[f"denoise/{name}"] = np.array(denoising_loss(nets[name], xp, q, noise_seed))
    out["bits"] = np.array(8 * (len(stream) - coding.HEADER_BITS // 8))
    out["payload_bits"] = np.array(coding.payload_bits(cfg["bits"], idx.size))
    out["tokens"] = np.array(idx.size)
    out["mismatches"] = np.array(int(np.sum(back != idx)) + int((hh, ww) != (h, w)))
    return out


def teacher_steps(settings: dict) -> list[int]:
    """The teacher's sampler step counts evaluated: the configured ones, always with 1 (the undistilled one-step
    pass) and N (sampler_steps)."""
    return sorted({1, int(settings["sampler_steps"]), *settings["teacher_steps"]})


DENOISE_T = torch.sigmoid(torch.linspace(-2.0, 2.0, 8))  # a fixed grid of the logit-normal timesteps


@torch.no_grad()
def denoising_loss(net: model.Denoiser, x: torch.Tensor, q: torch.Tensor, noise_seed: int) -> float:
    """Held-out conditional denoising loss of one image: the x-prediction MSE (in [-1, 1] units) averaged over a
    fixed grid of timesteps with fixed noise; how well the diffusion model fits p(image | code)."""
    gen = torch.Generator().manual_seed(noise_seed + 7)
    losses = []
    for t in DENOISE_T:
        noise = torch.randn(x.shape, generator=gen).to(x.device)
        tt = t.expand(len(x)).to(x.device)
        losses.append(float(torch.mean((net(model.noisy(x, tt, noise), tt, q) - x) ** 2)))
    return float(np.mean(losses))


@torch.no_grad()
def timings(nets: dict, settings: dict, device) -> dict[str, list[float]]:
    """Seconds per image, every repeat, of encoding (analysis, VQ, writing the indices) and of decoding by the
    MSE decoder, the one-step student and the N-step teacher (reading the indices, then synthesis), on one
    ``timing.height`` x ``timing.width`` image; the functions are timed in turn within each repeat, so that a
    change in machine load affects all of them alike."""
    cfg, tcfg = settings["model"], settings["timing"]
    codec = nets["codec"]
    x = torch.rand(1, 3, tcfg["height"], tcfg["width"], generator=torch.Generator().manual_seed(0)) * 2 - 1
    x = pad_to(x, cfg["ds"]).to(device)
    stream = coding.encode(codec.indices(x)[0].cpu().numpy(), cfg["bits"], x.shape[2], x.shape[3])
    noise = torch.randn(x.shape, generator=torch.Generator().manual_seed(1)).to(device)
    n = settings["sampler_steps"]

    def cond() -> torch.Tensor:
        return codec.vq.embed(torch.from_numpy(coding.decode(stream, cfg["bits"], cfg["ds"])[0])[None].to(device))

    fns = {
        "encode": lambda: coding.encode(codec.indices(x)[0].cpu().numpy(), cfg["bits"], x.shape[2], x.shape[3]),
        "decode_mse": lambda: codec.decoder(cond()),
        "decode_onestep": lambda: model.sample(nets["student"], cond(), noise, 1),
        f"decode_teacher_{n}": lambda: model.sample(nets["teacher"], cond(), noise, n),
    }
    for fn in fns.values():
        fn()  # warm-up (allocator, cudnn autotune)
    out: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(tcfg["repeats"]):
        for name, fn in fns.items():
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            fn()
            if device.type == "cuda":
                torch.cuda.synchronize()
            out[name].append(time.perf_counter() - start)
    return out


def main(job) -> None:
    settings, s = job.params.settings, int(job.wildcards.s)
    seed = int(job.params.seed) + s
    device = pick_device(job.params.device)
    store = CropStore(job.input.crops)
    if store.crops.shape[1] % settings["model"]["ds"]:
        raise InputError(job.input.crops, f"the crop side must be a multiple of ds = {settings['model']['ds']}")
    tests = load_test(job.input.test)
    ckpt_dir = Path(job.output.training).parent / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    nets, history = train_seed(store, settings, seed, ckpt_dir, device)
    recon: dict[str, np.ndarray] = {}
    for i, (name, img) in enumerate(tests.items()):
        x = to_tensor(img[None]).to(device)
        recon |= {f"{name}/{k}": v for k, v in decode_all(nets, x, settings, seed * 1000 + i).items()}
    recon["mean_colour"] = np.asarray(store.first(4096), dtype=np.float64).reshape(-1, 3).mean(axis=0)
    report = {
        "seed": s,
        "history": history,
        "parameters": {
            "encoder": count_parameters(nets["codec"].encoder) + int(nets["codec"].vq.codebook.numel()),
            "mse_decoder": count_parameters(nets["codec"].decoder),
            "denoiser": count_parameters(nets["teacher"]),
        },
        "timing": timings(nets, settings, device),
        "timing_size": [settings["timing"]["height"], settings["timing"]["width"]],
    }
    save_arrays(job.output.recon, recon)
    write_json(job.output.training, report)
    for ckpt in ckpt_dir.glob(f"s{seed}_*.pt"):
        ckpt.unlink()
