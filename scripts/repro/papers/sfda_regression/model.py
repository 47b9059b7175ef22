"""A regressor with a feature extractor g, a point head and the auxiliary discretized-distribution head."""

from __future__ import annotations

import torch
from torch import nn


class Regressor(nn.Module):
    """g(x) -> (prediction in normalised target units, K logits of the discretized distribution, features)."""

    def __init__(self, features: nn.Module, feature_dim: int, bins: int):
        super().__init__()
        self.features = features
        self.head = nn.Linear(feature_dim, 1)
        self.aux = nn.Linear(feature_dim, bins)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        z = self.features(x)
        return self.head(z).squeeze(-1), self.aux(z), z


class TeacherStudent(nn.Module):
    """The adapted student and its EMA teacher (a buffer-only copy), checkpointed together."""

    def __init__(self, student: Regressor, teacher: Regressor):
        super().__init__()
        self.student, self.teacher = student, teacher
        for p in self.teacher.parameters():
            p.requires_grad_(False)

    def ema(self, momentum: float) -> None:
        with torch.no_grad():
            for t, s in zip(self.teacher.parameters(), self.student.parameters()):
                t.mul_(momentum).add_(s.detach(), alpha=1.0 - momentum)
