"""The bitstream of the condition codec: VQ indices written at fixed length, as the paper's codec writes them.

No entropy model: each token's codebook index takes exactly ``bits`` bits (most significant first, tokens in
row-major order), so an image of h x w tokens costs bits * h * w bits and, when its sides are multiples of
the downsampling factor ds, bits / ds^2 per pixel. The image size (two 16-bit integers) is the declared
header, counted separately; the stream is padded with zero bits to whole bytes.
"""

from __future__ import annotations

import numpy as np

HEADER_BITS = 32


def payload_bits(bits: int, tokens: int) -> int:
    """Bits of the index payload of ``tokens`` tokens (before padding to whole bytes)."""
    return bits * tokens


def encode(indices: np.ndarray, bits: int, height: int, width: int) -> bytes:
    """Header (height, width as big-endian uint16) and the indices (h, w) at ``bits`` bits each."""
    idx = np.asarray(indices, dtype=np.int64).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= 2**bits):
        raise ValueError(f"index outside the {bits}-bit codebook")
    if not (0 < height < 2**16 and 0 < width < 2**16):
        raise ValueError("image sides must fit the 16-bit header")
    planes = (idx[:, None] >> np.arange(bits - 1, -1, -1)) & 1
    header = np.array([height, width], dtype=">u2").tobytes()
    return header + np.packbits(planes.astype(np.uint8).reshape(-1)).tobytes()


def decode(stream: bytes, bits: int, ds: int) -> tuple[np.ndarray, int, int]:
    """Indices (ceil(H/ds), ceil(W/ds)) and the image size (H, W) read back from a stream."""
    height, width = (int(v) for v in np.frombuffer(stream[:4], dtype=">u2"))
    h, w = -(-height // ds), -(-width // ds)
    flat = np.unpackbits(np.frombuffer(stream[4:], dtype=np.uint8))[: bits * h * w]
    if flat.size != bits * h * w:
        raise ValueError(f"stream too short: {flat.size} payload bits for {h} x {w} tokens of {bits} bits")
    weights = 1 << np.arange(bits - 1, -1, -1)
    return (flat.reshape(-1, bits).astype(np.int64) @ weights).reshape(h, w), height, width
