"""The controller u_Theta(lambda): a small ReLU MLP of the continuation parameter with a tanh-bounded output,
written in numpy with its own backward pass (every method shares it; no autograd framework is needed for
a network this small, and the optimise stage stays free of torch), plus Adam.
"""

from __future__ import annotations

import numpy as np


class Controller:
    """MLP lambda -> u in [-bound, bound]^outputs; parameters live in one flat vector ``theta``."""

    def __init__(self, hidden: list[int], outputs: int, bound: float, rng: np.random.Generator, out_scale: float):
        self.sizes = [1, *hidden, outputs]
        self.bound = bound
        parts = []
        for i, (fan_in, fan_out) in enumerate(zip(self.sizes[:-1], self.sizes[1:])):
            lim = 1.0 / np.sqrt(fan_in)
            scale = out_scale if i == len(self.sizes) - 2 else 1.0
            parts += [
                scale * rng.uniform(-lim, lim, (fan_in, fan_out)).ravel(),
                scale * rng.uniform(-lim, lim, fan_out),
            ]
        self.theta = np.concatenate(parts)

    def _unpack(self, theta: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        layers, at = [], 0
        for fan_in, fan_out in zip(self.sizes[:-1], self.sizes[1:]):
            w = theta[at : at + fan_in * fan_out].reshape(fan_in, fan_out)
            at += fan_in * fan_out
            layers.append((w, theta[at : at + fan_out]))
            at += fan_out
        return layers

    def controls(self, lam: np.ndarray, theta: np.ndarray | None = None) -> np.ndarray:
        return self._forward(lam, self.theta if theta is None else theta)[0]

    def _forward(self, lam: np.ndarray, theta: np.ndarray):
        h = lam.reshape(-1, 1)
        acts = [h]
        layers = self._unpack(theta)
        for i, (w, b) in enumerate(layers):
            h = h @ w + b
            if i < len(layers) - 1:
                h = np.maximum(h, 0.0)
            acts.append(h)
        return self.bound * np.tanh(h), acts, layers

    def backward(self, lam: np.ndarray, grad_u: np.ndarray) -> np.ndarray:
        """dLoss/dtheta from dLoss/du at the controls u(lam)."""
        u, acts, layers = self._forward(lam, self.theta)
        delta = grad_u * (self.bound - u * u / self.bound)  # d(bound tanh(a))/da = bound (1 - tanh^2)
        grads = []
        for i in range(len(layers) - 1, -1, -1):
            w, _ = layers[i]
            grads.append((acts[i].T @ delta, delta.sum(0)))
            if i:
                delta = (delta @ w.T) * (acts[i] > 0)
        return np.concatenate([g for gw, gb in reversed(grads) for g in (gw.ravel(), gb)])


class Adam:
    """Adam on a flat parameter vector (Kingma and Ba defaults)."""

    def __init__(self, size: int, lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        self.lr, self.betas, self.eps = lr, betas, eps
        self.m, self.v, self.t = np.zeros(size), np.zeros(size), 0

    def step(self, theta: np.ndarray, grad: np.ndarray) -> np.ndarray:
        b1, b2 = self.betas
        self.t += 1
        self.m = b1 * self.m + (1 - b1) * grad
        self.v = b2 * self.v + (1 - b2) * grad * grad
        m_hat, v_hat = self.m / (1 - b1**self.t), self.v / (1 - b2**self.t)
        return theta - self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
