"""First-order minimax methods, batched over problem instances (float64 numpy).

Each method runs ``iterations`` steps from (x0, y0) and returns the squared distance to the saddle after
every step and the cumulative number of full-gradient (or Hessian-vector) oracle calls, so that rates
can be compared per iteration and per oracle call. Step sizes are arrays over instances.

Theory step sizes (``theory_steps``):
- GDA (simultaneous): eta = mu / (4 L^2), mu = min(mu_x, mu_y);
- AGDA (alternating, two-timescale; Yang, Kiyavash & He 2020): eta_y = 1 / L, eta_x = mu_y^2 / (18 L^3);
- EG and OGDA: eta = 1 / (4 L);
- TALDA (reconstruction): eta_x = 1 / (L_xx + L_xy^2 / mu_y), the smoothness of Phi(x) = max_y f, so the
  x step grows to 1 / L_xx as the players decouple; eta_y = 1 / L_yy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

METHODS = ("gda", "agda", "eg", "ogda", "talda")
DIVERGED = 1e100
ARMIJO = 1e-4
MAX_HALVINGS = 40
STOP_RELATIVE_W = 1e-26
"""TALDA stops an instance once W <= 1e-26 W(x0, y0): below that, W comparisons are round-off."""


@dataclass
class Trace:
    """Per-iteration squared distance to the saddle, cumulative oracle calls, and TALDA's extras."""

    error: np.ndarray
    calls: np.ndarray
    lyapunov: np.ndarray | None = None
    corrections: np.ndarray | None = None
    extras: dict = field(default_factory=dict)


def theory_steps(method: str, k: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(eta_x, eta_y) per instance from the problem constants."""
    if method == "gda":
        eta = np.minimum(k["mu_x"], k["mu_y"]) / (4 * k["l"] ** 2)
        return eta, eta
    if method == "agda":
        return k["mu_y"] ** 2 / (18 * k["l"] ** 3), 1.0 / k["l"]
    if method in ("eg", "ogda"):
        return 1.0 / (4 * k["l"]), 1.0 / (4 * k["l"])
    if method == "talda":
        return 1.0 / (k["l_xx"] + k["l_xy"] ** 2 / k["mu_y"]), 1.0 / k["l_yy"]
    raise ValueError(f"unknown method {method!r}; choose from {METHODS}")


def lyapunov(gx: np.ndarray, gy: np.ndarray, k: dict[str, np.ndarray]) -> np.ndarray:
    """Gradient surrogate W = ||grad_x f||^2 / mu_x + ||grad_y f||^2 / mu_y (zero exactly at stationary points).

    By the two-sided PL inequalities, W >= 2 [(f - min_x f) + (max_y f - f)], so W bounds the idealised
    Lyapunov terms from above and is computable from one gradient.
    """
    return np.sum(gx**2, axis=1) / k["mu_x"] + np.sum(gy**2, axis=1) / k["mu_y"]


def _distance(x, y, xs, ys) -> np.ndarray:
    return np.sum((x - xs) ** 2, axis=1) + np.sum((y - ys) ** 2, axis=1)


def run(method: str, problem, x0, y0, eta_x, eta_y, iterations: int) -> Trace:
    """Run one method on every instance; diverged instances are frozen and report inf from then on."""
    if method == "talda":
        return run_talda(problem, x0, y0, eta_x, eta_y, iterations)
    xs, ys = problem.saddle()
    ex, ey = eta_x[:, None], eta_y[:, None]
    x, y = x0.copy(), y0.copy()
    error = np.empty((len(x0), iterations + 1))
    error[:, 0] = _distance(x, y, xs, ys)
    per_call = {"gda": 1, "agda": 2, "eg": 2, "ogda": 1}[method]
    prev = problem.grad(x, y)
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(1, iterations + 1):
            gx, gy = problem.grad(x, y)
            if method == "gda":
                x, y = x - ex * gx, y + ey * gy
            elif method == "agda":
                x = x - ex * gx
                y = y + ey * problem.grad(x, y)[1]
            elif method == "eg":
                hx, hy = problem.grad(x - ex * gx, y + ey * gy)
                x, y = x - ex * hx, y + ey * hy
            else:
                x, y = x - ex * (2 * gx - prev[0]), y + ey * (2 * gy - prev[1])
                prev = (gx, gy)
            err = _distance(x, y, xs, ys)
            bad = ~np.isfinite(err) | (err > DIVERGED)
            err[bad] = np.inf
            x[bad], y[bad] = xs[bad], ys[bad]
            error[:, t] = err
    calls = np.broadcast_to(per_call * np.arange(iterations + 1.0), error.shape).copy()
    return Trace(error=np.where(np.cumsum(np.isinf(error), axis=1) > 0, np.inf, error), calls=calls)


def run_talda(problem, x0, y0, eta_x, eta_y, iterations: int) -> Trace:
    """TALDA as reconstructed: three actions per iteration, W non-increasing by construction.

    1. descent in x: x+ = x - eta_x grad_x f(x, y);
    2. ascent in y at the new x: y+ = y + eta_y grad_y f(x+, y);
    3. Lyapunov check and correction: accept (x+, y+) if W(x+, y+) <= W(x, y); otherwise take a
       backtracked (Armijo) gradient step on W itself from (x, y), grad W = Hessian (2 g_x / mu_x,
       2 g_y / mu_y) computed by one Hessian-vector product; if no step decreases W, stay.
    An instance stops (its iterate is kept, no more oracle calls) once W <= STOP_RELATIVE_W W(x0, y0).
    ``corrections`` counts, per instance, the iterations whose step 1-2 was rejected; ``extras['active']`` the
    iterations it was still running.
    """
    k = problem.constants()
    xs, ys = problem.saddle()
    ex, ey = eta_x[:, None], eta_y[:, None]
    x, y = x0.copy(), y0.copy()
    n = len(x0)
    error, w_trace, calls = (np.empty((n, iterations + 1)) for _ in range(3))
    corrections, active_steps = np.zeros(n, dtype=int), np.zeros(n, dtype=int)
    gx, gy = problem.grad(x, y)
    w = lyapunov(gx, gy, k)
    error[:, 0], w_trace[:, 0], calls[:, 0] = _distance(x, y, xs, ys), w, 1
    first_step = 1.0 / (2 * k["l"] ** 2 / np.minimum(k["mu_x"], k["mu_y"]))
    stop = STOP_RELATIVE_W * w
    for t in range(1, iterations + 1):
        active = w > stop
        if not active.any():
            error[:, t:], w_trace[:, t:], calls[:, t:] = error[:, t - 1 : t], w_trace[:, t - 1 : t], calls[:, t - 1 : t]
            break
        active_steps += active
        x1 = x - ex * gx
        y1 = y + ey * problem.grad(x1, y)[1]
        g1x, g1y = problem.grad(x1, y1)
        w1 = lyapunov(g1x, g1y, k)
        used = np.where(active, 2.0, 0.0)
        reject = active & ~(w1 <= w)
        x1[~active], y1[~active], g1x[~active], g1y[~active], w1[~active] = (
            x[~active],
            y[~active],
            gx[~active],
            gy[~active],
            w[~active],
        )
        if reject.any():
            dx, dy = problem.hvp(x, y, 2 * gx / k["mu_x"][:, None], 2 * gy / k["mu_y"][:, None])
            used[reject] += 1
            x1[reject], y1[reject], g1x[reject], g1y[reject], w1[reject] = (
                x[reject],
                y[reject],
                gx[reject],
                gy[reject],
                w[reject],
            )
            step = first_step.copy()
            todo = reject.copy()
            for _ in range(MAX_HALVINGS):
                if not todo.any():
                    break
                xt, yt = x - step[:, None] * dx, y - step[:, None] * dy
                tx, ty = problem.grad(xt, yt)
                wt = lyapunov(tx, ty, k)
                used[todo] += 1
                ok = todo & (wt <= w - ARMIJO * step * (np.sum(dx**2, 1) + np.sum(dy**2, 1)))
                x1[ok], y1[ok], g1x[ok], g1y[ok], w1[ok] = xt[ok], yt[ok], tx[ok], ty[ok], wt[ok]
                todo &= ~ok
                step = np.where(todo, step / 2, step)
            corrections += reject
        x, y, gx, gy, w = x1, y1, g1x, g1y, w1
        error[:, t], w_trace[:, t], calls[:, t] = _distance(x, y, xs, ys), w, calls[:, t - 1] + used
    return Trace(error=error, calls=calls, lyapunov=w_trace, corrections=corrections, extras={"active": active_steps})
