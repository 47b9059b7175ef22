"""Image quality metrics shared by image papers: PSNR, MS-SSIM (pytorch-msssim) and an offline
patch-distribution distance.

Why here: several papers compare codecs or generators on 8-bit RGB images; one implementation keeps the
conventions (uint8 range, how many MS-SSIM scales fit a small image) the same everywhere.
"""

from __future__ import annotations

import numpy as np


def psnr(pred: np.ndarray, true: np.ndarray) -> np.ndarray:
    """PSNR (dB) per image of uint8 (or 0..255 float) arrays shaped (N, H, W, C); identical images give inf."""
    diff = np.asarray(pred, dtype=np.float64) - np.asarray(true, dtype=np.float64)
    mse = np.mean(diff**2, axis=tuple(range(1, diff.ndim)))
    with np.errstate(divide="ignore"):
        return 10.0 * np.log10(255.0**2 / mse)


def msssim_window(height: int, width: int, largest: int = 11) -> int:
    """Largest odd Gaussian window (at most the standard 11) that pytorch-msssim accepts for this size.

    pytorch-msssim asserts min(H, W) > (win_size - 1) * 2**4 whatever the number of scales, so small images
    need a smaller window (64-pixel images get 3); at 176 pixels and above the standard 11 is used.
    """
    side = min(height, width)
    win = largest
    while win > 1 and side <= (win - 1) * 16:
        win -= 2
    if win < 3:
        raise ValueError(f"images of {height}x{width} pixels are too small for MS-SSIM")
    return win


def ms_ssim(pred: np.ndarray, true: np.ndarray) -> np.ndarray:
    """MS-SSIM per image (pytorch-msssim, data range 255, five scales with the standard weights) of
    (N, H, W, 3) arrays, with the window of :func:`msssim_window`."""
    import torch
    from pytorch_msssim import ms_ssim as _ms_ssim

    n, h, w = np.shape(true)[:3]
    x = torch.from_numpy(np.asarray(pred, dtype=np.float32)).permute(0, 3, 1, 2)
    y = torch.from_numpy(np.asarray(true, dtype=np.float32)).permute(0, 3, 1, 2)
    out = _ms_ssim(x, y, data_range=255.0, size_average=False, win_size=msssim_window(h, w))
    return out.numpy().astype(np.float64)


def patches(images: np.ndarray, size: int) -> np.ndarray:
    """Non-overlapping size x size patches of (N, H, W, C) images, flattened to (P, size*size*C) in [0, 1]."""
    n, h, w, c = images.shape
    rows, cols = h // size, w // size
    x = np.asarray(images[:, : rows * size, : cols * size], dtype=np.float64) / 255.0
    x = x.reshape(n, rows, size, cols, size, c).transpose(0, 1, 3, 2, 4, 5)
    return x.reshape(n * rows * cols, size * size * c)


def sliced_wasserstein(
    pred: np.ndarray, true: np.ndarray, patch: int = 4, projections: int = 128, seed: int = 0
) -> float:
    """Sliced Wasserstein-1 distance between the distributions of pred and true patches (pixel space).

    A perceptual proxy that needs no pretrained network (so it runs offline): blurry reconstructions
    lose patch variance and move away from the real patch distribution even where PSNR is high. It is a
    non-standard stand-in for patch FID; both sets must give the same number of patches.
    """
    a, b = patches(pred, patch), patches(true, patch)
    rng = np.random.default_rng(seed)
    dirs = rng.normal(size=(a.shape[1], projections))
    dirs /= np.linalg.norm(dirs, axis=0, keepdims=True)
    pa, pb = np.sort(a @ dirs, axis=0), np.sort(b @ dirs, axis=0)
    return float(np.mean(np.abs(pa - pb)))
