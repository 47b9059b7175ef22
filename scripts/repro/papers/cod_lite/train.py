"""Stage: train the codec, the diffusion decoders and the one-step student per seed; decode the test set.

Per seed:
1. the MSE autoencoder codec (analysis transform, entropy model, synthesis) on rate + MSE; its analysis
   transform and entropy model are then frozen and shared, so every decoder reads the same bitstream;
2. the multi-step diffusion teacher, compression-oriented: trained conditioned on the quantised latent from
   the first step;
3. the same teacher generation-oriented: first trained unconditionally (a generic image generator), then
   conditioned for the remaining steps (same total number of steps);
4. the one-step decoder, initialised from the compression-oriented teacher and distilled by regression onto
   the teacher's N-step samples from the same noise.

Outputs:
- recon.npz: ``s<seed>/<decoder>`` uint8 reconstructions of the test images (decoders ``mse``, ``onestep``,
  ``teacher_<n>`` for each sampler step count, ``gen_teacher_<N>``), ``s<seed>/bits`` bits written per test
  image, ``s<seed>/ideal_bits`` their information content, ``s<seed>/mismatches`` latent values changed by the
  encode -> decode round trip;
- training.json: loss histories, parameter counts, encode/decode timings (seed 0) and the settings.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from repro.learning.fields_training import fit_arrays
from repro.learning.operators import count_parameters
from repro.learning.training import fingerprint_of
from repro.papers.cod_lite import coding, model
from repro.workflow.device import pick_device
from repro.workflow.fields_io import save_arrays
from repro.workflow.io import InputError, read_npz, write_json


class MSECodec(nn.Module):
    """Analysis transform, entropy model and synthesis trained together on distortion + lambda * rate."""

    def __init__(self, cfg: dict):
        super().__init__()
        self.levels = cfg["levels"]
        self.encoder = model.Encoder(cfg["width"], cfg["latent"], cfg["ds"], cfg["blocks"])
        self.prior = model.EntropyModel(cfg["latent"], cfg["levels"])
        self.decoder = model.Synthesis(cfg["width"], cfg["latent"], cfg["ds"], cfg["blocks"])

    def latent(self, x: torch.Tensor) -> torch.Tensor:
        """Integer latent of images in [-1, 1] (what the encoder writes)."""
        return torch.round(self.encoder(x).clamp(-self.levels, self.levels))


def to_tensor(images: np.ndarray) -> torch.Tensor:
    """uint8 (N, H, W, 3) -> float (N, 3, H, W) in [-1, 1]."""
    return torch.from_numpy(images).permute(0, 3, 1, 2).float() / 127.5 - 1.0


def to_uint8(x: torch.Tensor) -> np.ndarray:
    return ((x.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8).permute(0, 2, 3, 1).numpy()


def rate_distortion_loss(lam: float):
    def loss(codec: MSECodec, batch) -> torch.Tensor:
        (x,) = batch
        y = codec.encoder(x)
        bits = codec.prior.bits(y + torch.rand_like(y) - 0.5)
        recon = codec.decoder(model.quantise(y, codec.levels))
        return torch.mean((recon - x) ** 2) + lam * bits / (x.shape[0] * x.shape[2] * x.shape[3])

    return loss


def diffusion_loss(cond_mask: float):
    """x-prediction loss at logit-normal timesteps; ``cond_mask`` 0 trains the unconditional generator."""

    def loss(net: model.Denoiser, batch) -> torch.Tensor:
        x, q = batch
        t = model.lognormal_t(len(x), x.device)
        return torch.mean((net(model.noisy(x, t, torch.randn_like(x)), t, q, cond_mask) - x) ** 2)

    return loss


def distill_loss(net: model.Denoiser, batch) -> torch.Tensor:
    """One forward pass from pure noise regressed onto the teacher's multi-step sample from that noise."""
    noise, q, target = batch
    return torch.mean((net(noise, torch.ones(len(noise), device=noise.device), q) - target) ** 2)


class Trainer:
    """Runs every fit of one seed with its own checkpoint, tied to the settings and this code."""

    def __init__(self, settings: dict, seed: int, ckpt_dir: Path, device):
        self.settings, self.seed, self.ckpt_dir, self.device = settings, seed, ckpt_dir, device

    def fit(self, name: str, net: nn.Module, arrays, loss, epochs: int, lr: float | None = None):
        cfg = self.settings["train"]
        return fit_arrays(
            net,
            arrays,
            loss,
            train_cfg={"epochs": epochs, "batch": cfg["batch"], "lr": lr or cfg["lr"]},
            seed=self.seed,
            checkpoint=self.ckpt_dir / f"s{self.seed}_{name}.pt",
            fingerprint=fingerprint_of([self.settings, name, self.seed], [__file__, model.__file__]),
            desc=f"cod-lite {name} seed {self.seed}",
            device=self.device,
        ).history


def batched(fn, *arrays: torch.Tensor, size: int = 64) -> torch.Tensor:
    return torch.cat([fn(*(a[i : i + size] for a in arrays)) for i in range(0, len(arrays[0]), size)])


def run_seed(train_x: torch.Tensor, test_x: torch.Tensor, settings: dict, seed: int, ckpt_dir: Path, device):
    """Train everything for one seed; return (reconstructions and bits, histories, the trained networks)."""
    cfg, tcfg = settings["model"], settings["train"]
    trainer = Trainer(settings, seed, ckpt_dir, device)
    history: dict[str, list] = {}
    torch.manual_seed(seed)
    codec = MSECodec(cfg)
    history["mse"] = trainer.fit("mse", codec, (train_x,), rate_distortion_loss(tcfg["lambda_rate"]), tcfg["ae_epochs"])
    with torch.no_grad():
        q_train, q_test = batched(codec.latent, train_x), batched(codec.latent, test_x)

    def denoiser() -> model.Denoiser:
        return model.Denoiser(cfg["width"], cfg["latent"], cfg["ds"], cfg["denoiser_blocks"], cfg["patch"])

    torch.manual_seed(seed + 1)
    teacher = denoiser()
    history["teacher"] = trainer.fit(
        "teacher", teacher, (train_x, q_train), diffusion_loss(1.0), tcfg["diffusion_epochs"]
    )
    torch.manual_seed(seed + 1)
    gen = denoiser()
    pre = tcfg["generation_pretrain_epochs"]
    history["gen_pretrain"] = trainer.fit("gen_pretrain", gen, (train_x, q_train), diffusion_loss(0.0), pre)
    history["gen_finetune"] = trainer.fit(
        "gen_finetune", gen, (train_x, q_train), diffusion_loss(1.0), tcfg["diffusion_epochs"] - pre
    )
    steps = settings["sampler_steps"]
    gen_noise = torch.Generator().manual_seed(seed * 1000 + 11)
    pool = torch.randn(train_x.shape, generator=gen_noise)
    with torch.no_grad():
        target = batched(lambda n, q: model.sample(teacher, q, n, steps), pool, q_train)
    student = denoiser()
    student.load_state_dict(teacher.state_dict())
    history["onestep"] = trainer.fit(
        "onestep", student, (pool, q_train, target), distill_loss, tcfg["distill_epochs"], tcfg["distill_lr"]
    )
    noise = torch.randn(test_x.shape, generator=torch.Generator().manual_seed(seed * 1000 + 23))
    out: dict[str, np.ndarray] = {}
    with torch.no_grad():
        out["mse"] = to_uint8(codec.decoder(q_test))
        out["onestep"] = to_uint8(model.sample(student, q_test, noise, 1))
        for n in settings["teacher_steps"]:
            out[f"teacher_{n}"] = to_uint8(model.sample(teacher, q_test, noise, n))
        out[f"gen_teacher_{steps}"] = to_uint8(model.sample(gen, q_test, noise, steps))
    out |= bitstream_checks(codec, q_test)
    return out, history, {"codec": codec, "student": student, "teacher": teacher}


def bitstream_checks(codec: MSECodec, q_test: torch.Tensor) -> dict[str, np.ndarray]:
    """Range-code every test latent; bits written, ideal code length and round-trip mismatches per image."""
    pmf = codec.prior.pmf().detach().double().numpy()
    bits, ideal, mismatches = [], [], []
    for q in q_test.numpy().astype(np.int64):
        words = coding.encode(q, pmf)
        bits.append(32 * len(words))
        ideal.append(coding.ideal_bits(q, pmf))
        mismatches.append(int(np.sum(coding.decode(words, pmf, q.shape) != q)))
    return {"bits": np.array(bits), "ideal_bits": np.array(ideal), "mismatches": np.array(mismatches)}


def best_times(fns: dict, repeats: int) -> dict[str, float]:
    """Fastest of ``repeats`` wall times of each function, the functions timed in turn within each repeat so
    that a change in machine load affects all of them alike."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


@torch.no_grad()
def timings(nets: dict, test_x: torch.Tensor, steps: int, repeats: int) -> dict[str, float]:
    """Seconds per image (best of ``repeats``, whole test set in one batch, CPU) of encoding (analysis,
    quantisation, range coding), entropy decoding, and synthesis by the MSE decoder, the one-step decoder
    and the N-step teacher."""
    codec, student, teacher = nets["codec"], nets["student"], nets["teacher"]
    pmf = codec.prior.pmf().double().numpy()
    q = codec.latent(test_x)
    words = [coding.encode(v, pmf) for v in q.numpy().astype(np.int64)]
    noise = torch.randn(test_x.shape, generator=torch.Generator().manual_seed(0))
    fns = {
        "encode": lambda: [coding.encode(v, pmf) for v in codec.latent(test_x).numpy().astype(np.int64)],
        "entropy_decode": lambda: [coding.decode(w, pmf, tuple(q.shape[1:])) for w in words],
        "synth_mse": lambda: codec.decoder(q),
        "synth_onestep": lambda: model.sample(student, q, noise, 1),
        f"synth_teacher_{steps}": lambda: model.sample(teacher, q, noise, steps),
    }
    out: dict[str, float] = {k: v / len(test_x) for k, v in best_times(fns, repeats).items()}
    return out | {"pixels_per_image": int(test_x.shape[2] * test_x.shape[3])}


def load_images(path: str) -> tuple[np.ndarray, np.ndarray]:
    data = read_npz(path)
    for key in ("train", "test"):
        if key not in data or data[key].ndim != 4 or data[key].shape[-1] != 3 or data[key].dtype != np.uint8:
            raise InputError(path, f"'{key}' must be uint8 (N, H, W, 3)")
    return data["train"], data["test"]


def main(job) -> None:
    settings, seed0 = job.params.settings, int(job.params.seed)
    device = pick_device(job.params.device)
    train_u8, test_u8 = load_images(job.input.images)
    ds = int(np.lcm(settings["model"]["ds"], settings["model"]["patch"]))
    if test_u8.shape[1] % ds or train_u8.shape[1] % ds:
        raise InputError(job.input.images, f"image sides must be multiples of the downsampling factor {ds}")
    train_x, test_x = to_tensor(train_u8), to_tensor(test_u8)
    ckpt_dir = Path(job.output.training).parent / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    recon: dict[str, np.ndarray] = {}
    report: dict = {"history": {}, "settings": settings}
    for s in settings["seeds"]:
        out, history, nets = run_seed(train_x, test_x, settings, seed0 + s, ckpt_dir, device)
        recon |= {f"s{s}/{k}": v for k, v in out.items()}
        report["history"][f"s{s}"] = history
        if "timing" not in report:
            report["parameters"] = {
                "encoder": count_parameters(nets["codec"].encoder),
                "mse_decoder": count_parameters(nets["codec"].decoder),
                "denoiser": count_parameters(nets["teacher"]),
            }
            report["timing"] = timings(nets, test_x, settings["sampler_steps"], settings["timing_repeats"])
    save_arrays(job.output.recon, recon)
    write_json(job.output.training, report)
    for ckpt in ckpt_dir.glob("*.pt"):
        ckpt.unlink()
