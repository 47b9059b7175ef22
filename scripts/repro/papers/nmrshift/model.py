"""A small Uni-Mol-style 3-D transformer for per-atom chemical shifts, with solvent conditioning.

Atoms (explicit H) are tokens; a [CLS] token sits at the centroid. Pair distances go through
Gaussian kernels with a learned affine map per atom-type pair (as in Uni-Mol) and become an
attention bias per head. The paper's backbone has 15 layers of width 512; the default here is
a few narrow layers so the embedded run fits a CPU (brief §5, "Uni-Core is not used offline").
Solvent strategies (brief §3): 'none', 'cls' (embedding added to [CLS] before the backbone),
'atom_pre' / 'atom_post' (added to every atom token before / after the backbone), 'scalar'
(a learned shift offset per solvent).
"""

from __future__ import annotations

import math

import torch
from torch import nn

ELEMENTS = ("H", "C", "N", "O", "F", "S", "P", "Cl")
ATOMIC_NUMBERS = (1, 6, 7, 8, 9, 16, 15, 17)
PAD_TOKEN, CLS_TOKEN = 0, 1
N_TOKENS = 2 + len(ELEMENTS) + 1
N_SOLVENTS = 4
SOLVENT_MODES = ("none", "cls", "atom_pre", "atom_post", "scalar")


COVALENT_RADII = (0.31, 0.76, 0.71, 0.66, 0.57, 1.05, 1.07, 1.02)
BOND_TOLERANCE = 1.15


def token_of(atomic_numbers: torch.Tensor) -> torch.Tensor:
    """Token ids of atomic numbers; anything outside the element list maps to the last id."""
    table = torch.full((128,), N_TOKENS - 1, dtype=torch.long, device=atomic_numbers.device)
    for i, z in enumerate(ATOMIC_NUMBERS):
        table[z] = 2 + i
    return table[atomic_numbers.long()]


def bonded_neighbour_counts(tokens: torch.Tensor, distances: torch.Tensor) -> torch.Tensor:
    """Per atom, how many neighbours of each element lie within 1.15 x the covalent-radius sum.

    Computed from the conformer alone (the model's input stays atom types + coordinates, as in
    Uni-Mol); it hands the small CPU model the bonding pattern a 15-layer backbone learns itself.
    """
    radii = torch.zeros(N_TOKENS, device=tokens.device)
    radii[2 : 2 + len(COVALENT_RADII)] = torch.tensor(COVALENT_RADII, device=tokens.device)
    r = radii[tokens]
    bonded = (distances < BOND_TOLERANCE * (r[:, :, None] + r[:, None, :])) & (r[:, :, None] > 0) & (r[:, None, :] > 0)
    bonded = bonded & ~torch.eye(tokens.shape[1], dtype=torch.bool, device=tokens.device)[None]
    onehot = torch.nn.functional.one_hot(tokens, N_TOKENS).float()
    return bonded.float() @ onehot


class GaussianPairEncoder(nn.Module):
    """Distances -> per-head attention bias through K Gaussian kernels and a per-type-pair affine map."""

    def __init__(self, kernels: int, heads: int):
        super().__init__()
        self.means = nn.Parameter(torch.linspace(0.0, 8.0, kernels))
        self.log_stds = nn.Parameter(torch.full((kernels,), math.log(0.5)))
        self.mul = nn.Embedding(N_TOKENS * N_TOKENS, 1)
        self.bias = nn.Embedding(N_TOKENS * N_TOKENS, 1)
        nn.init.constant_(self.mul.weight, 1.0)
        nn.init.constant_(self.bias.weight, 0.0)
        self.proj = nn.Sequential(nn.Linear(kernels, kernels), nn.GELU(), nn.Linear(kernels, heads))

    def forward(self, tokens: torch.Tensor, distances: torch.Tensor) -> torch.Tensor:
        pair = tokens[:, :, None] * N_TOKENS + tokens[:, None, :]
        x = self.mul(pair).squeeze(-1) * distances + self.bias(pair).squeeze(-1)
        stds = self.log_stds.exp()
        gauss = torch.exp(-0.5 * ((x[..., None] - self.means) / stds) ** 2) / (stds * math.sqrt(2 * math.pi))
        return self.proj(gauss).permute(0, 3, 1, 2)


class Layer(nn.Module):
    """Pre-norm self-attention with an additive pair bias, then a GELU feed-forward block."""

    def __init__(self, width: int, heads: int, dropout: float):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.ffn = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(), nn.Dropout(dropout), nn.Linear(4 * width, width)
        )
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, bias: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        b, n, w = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        logits = q @ k.transpose(-1, -2) / math.sqrt(w // self.heads) + bias
        logits = logits.masked_fill(pad[:, None, None, :], float("-inf"))
        attn = self.dropout(torch.softmax(logits, dim=-1))
        x = x + self.dropout(self.out((attn @ v).transpose(1, 2).reshape(b, n, w)))
        return x + self.dropout(self.ffn(self.norm2(x)))


class ShiftTransformer(nn.Module):
    """Per-atom shift regression (standardised units) from atom types, 3-D coordinates and solvent."""

    def __init__(
        self,
        width: int = 64,
        layers: int = 3,
        heads: int = 4,
        kernels: int = 32,
        dropout: float = 0.0,
        solvent: str = "cls",
    ):
        super().__init__()
        if solvent not in SOLVENT_MODES:
            raise ValueError(f"solvent mode {solvent!r} not in {SOLVENT_MODES}")
        self.solvent_mode = solvent
        self.embed = nn.Embedding(N_TOKENS, width, padding_idx=PAD_TOKEN)
        self.neighbours = nn.Linear(N_TOKENS, width, bias=False)
        self.pairs = GaussianPairEncoder(kernels, heads)
        self.layers = nn.ModuleList(Layer(width, heads, dropout) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, 1))
        self.solvent = nn.Embedding(N_SOLVENTS, 1 if solvent == "scalar" else width)
        nn.init.zeros_(self.solvent.weight)

    def forward(
        self,
        atomic_numbers: torch.Tensor,
        coords: torch.Tensor,
        solvent: torch.Tensor,
        features: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``atomic_numbers`` [B, N] (0 = padding), ``coords`` [B, N, 3], ``solvent`` [B] -> shifts [B, N]."""
        pad_atoms = atomic_numbers == 0
        tokens = torch.where(pad_atoms, torch.zeros_like(atomic_numbers, dtype=torch.long), token_of(atomic_numbers))
        real = (~pad_atoms).float()[..., None]
        centroid = (coords * real).sum(1, keepdim=True) / real.sum(1, keepdim=True).clamp(min=1)
        tokens = torch.cat([torch.full_like(tokens[:, :1], CLS_TOKEN), tokens], dim=1)
        coords = torch.cat([centroid, coords], dim=1)
        pad = torch.cat([torch.zeros_like(pad_atoms[:, :1]), pad_atoms], dim=1)
        distances = torch.cdist(coords, coords)
        x = self.embed(tokens) + self.neighbours(bonded_neighbour_counts(tokens, distances))
        solvent_vec = self.solvent(solvent)
        if self.solvent_mode == "cls":
            x = torch.cat([x[:, :1] + solvent_vec[:, None], x[:, 1:]], dim=1)
        elif self.solvent_mode == "atom_pre":
            x = x + solvent_vec[:, None]
        bias = self.pairs(tokens, distances)
        for layer in self.layers:
            x = layer(x, bias, pad)
        x = self.norm(x)[:, 1:]
        if self.solvent_mode == "atom_post":
            x = x + solvent_vec[:, None]
        out = self.head(x).squeeze(-1)
        if self.solvent_mode == "scalar":
            out = out + solvent_vec
        return out.masked_fill(pad_atoms, 0.0)


def gaussian_environment(
    atomic_numbers: torch.Tensor, coords: torch.Tensor, kernels: int, cutoff: float = 6.0
) -> torch.Tensor:
    """Per-atom 3-D environment: for each neighbour element, Gaussian-smeared distances (cosine cut-off).

    The same Gaussian distance features the transformer turns into attention biases, summed per
    element around each atom (atom-centred radial symmetry functions); [B, N, elements * kernels + elements].
    """
    tokens = token_of(atomic_numbers) * (atomic_numbers > 0)
    onehot = torch.nn.functional.one_hot(tokens, N_TOKENS).float()[..., 2 : 2 + len(ELEMENTS)]
    # Always by matrix product (cdist's default takes it only above 25 atoms, as for records padded to 70), so
    # that the distances, and the features, do not depend on how far a batch is padded.
    d = torch.cdist(coords, coords, compute_mode="use_mm_for_euclid_dist")
    real = (atomic_numbers > 0).float()
    pair = real[:, :, None] * real[:, None, :] * (1 - torch.eye(d.shape[1], device=d.device))[None]
    fc = 0.5 * (torch.cos(torch.pi * d.clamp(max=cutoff) / cutoff) + 1.0) * pair
    means = torch.linspace(0.8, cutoff, kernels, device=d.device)
    width = (cutoff - 0.8) / kernels
    g = torch.exp(-0.5 * ((d[..., None] - means) / width) ** 2) * fc[..., None]
    env = torch.einsum("bijk,bje->biek", g, onehot).flatten(2)
    return torch.cat([onehot, env], dim=-1)


class EnvironmentMLP(nn.Module):
    """Per-atom MLP on :func:`gaussian_environment` features: the cheap CPU backbone of the embedded default.

    Solvent modes as for the transformer; with no [CLS] token, 'cls' adds the solvent embedding to
    the first hidden layer of every atom (a global conditioning, like 'atom_pre').
    """

    def __init__(
        self,
        width: int = 64,
        layers: int = 2,
        kernels: int = 16,
        dropout: float = 0.0,
        solvent: str = "cls",
        heads: int = 1,
    ):
        super().__init__()
        if solvent not in SOLVENT_MODES:
            raise ValueError(f"solvent mode {solvent!r} not in {SOLVENT_MODES}")
        self.solvent_mode = solvent
        self.kernels = kernels
        n_in = len(ELEMENTS) * (kernels + 1)
        self.inp = nn.Linear(n_in, width)
        self.hidden = nn.ModuleList(nn.Linear(width, width) for _ in range(layers - 1))
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(width, 1)
        self.solvent = nn.Embedding(N_SOLVENTS, 1 if solvent == "scalar" else width)
        nn.init.zeros_(self.solvent.weight)

    def features(self, atomic_numbers: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        return gaussian_environment(atomic_numbers, coords, self.kernels)

    def forward(
        self,
        atomic_numbers: torch.Tensor,
        coords: torch.Tensor,
        solvent: torch.Tensor,
        features: torch.Tensor | None = None,
    ) -> torch.Tensor:
        x = self.features(atomic_numbers, coords) if features is None else features
        vec = self.solvent(solvent)[:, None]
        h = self.inp(x)
        if self.solvent_mode in ("cls", "atom_pre"):
            h = h + vec
        h = torch.nn.functional.gelu(h)
        for layer in self.hidden:
            h = self.drop(torch.nn.functional.gelu(layer(h)))
        if self.solvent_mode == "atom_post":
            h = h + vec
        out = self.out(h).squeeze(-1)
        if self.solvent_mode == "scalar":
            out = out + vec.squeeze(-1)
        return out.masked_fill(atomic_numbers == 0, 0.0)


BACKBONES = {"transformer": ShiftTransformer, "environment_mlp": EnvironmentMLP}


def build_model(settings: dict, solvent: str) -> nn.Module:
    """The configured backbone ('transformer' at paper scale, 'environment_mlp' for the CPU default)."""
    spec = dict(settings)
    kind = spec.pop("backbone")
    return BACKBONES[kind](solvent=solvent, **spec)
