"""Ground-truth survival functions of the simulation design and a sampler (numpy stand-in for R's simsurv).

log h(t | x) = log h0 + beta.x + gamma x1 x2 + delta x3 log t, so
H(t | x) = h0 exp(beta.x + gamma x1 x2) t^(1 + delta x3) / (1 + delta x3), S = exp(-H), and inversion of
S(T) = U gives T = [-log U (1 + delta x3) / (h0 exp(beta.x + gamma x1 x2))]^(1 / (1 + delta x3)). Features
are N(0, Sigma) clipped to [-clip, clip] with |delta| clip < 1 so that 1 + delta x3 > 0; censoring is
uniform on [0, censor_max].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Scenario:
    name: str
    beta: tuple[float, float, float]
    gamma: float
    delta: float
    rho: float

    def linear(self, x: np.ndarray) -> np.ndarray:
        return x @ np.asarray(self.beta) + self.gamma * x[:, 0] * x[:, 1]

    def log_hazard(self, x: np.ndarray, t: np.ndarray, h0: float) -> np.ndarray:
        return np.log(h0) + self.linear(x)[:, None] + self.delta * x[:, 2:3] * np.log(t)[None]

    def hazard(self, x: np.ndarray, t: np.ndarray, h0: float) -> np.ndarray:
        return np.exp(self.log_hazard(x, t, h0))

    def cumulative_hazard(self, x: np.ndarray, t: np.ndarray, h0: float) -> np.ndarray:
        power = 1.0 + self.delta * x[:, 2:3]
        return h0 * np.exp(self.linear(x))[:, None] * t[None] ** power / power

    def survival(self, x: np.ndarray, t: np.ndarray, h0: float) -> np.ndarray:
        return np.exp(-self.cumulative_hazard(x, t, h0))


def scenario_from(cfg: dict) -> Scenario:
    return Scenario(cfg["name"], tuple(cfg["beta"]), float(cfg["gamma"]), float(cfg["delta"]), float(cfg["rho"]))


def features(rng: np.random.Generator, n: int, rho: float, clip: float) -> np.ndarray:
    cov = np.eye(3)
    cov[0, 1] = cov[1, 0] = rho
    return np.clip(rng.multivariate_normal(np.zeros(3), cov, size=n), -clip, clip)


def sample(
    rng: np.random.Generator, sc: Scenario, n: int, h0: float, clip: float, censor_max: float | None
) -> dict[str, np.ndarray]:
    """Features, observed time and event indicator of n subjects under scenario ``sc`` (``censor_max`` None:
    no censoring, every event time observed, as a held-out cohort for scoring survival curves)."""
    if abs(sc.delta) * clip >= 1:
        raise ValueError(f"scenario {sc.name}: |delta| * clip must stay below 1 so that 1 + delta x3 > 0")
    x = features(rng, n, sc.rho, clip)
    power = 1.0 + sc.delta * x[:, 2]
    u = rng.uniform(size=n)
    event_time = (-np.log(u) * power / (h0 * np.exp(sc.linear(x)))) ** (1.0 / power)
    censor = np.full(n, np.inf) if censor_max is None else rng.uniform(0.0, censor_max, size=n)
    return {"x": x, "time": np.minimum(event_time, censor), "event": event_time <= censor}
