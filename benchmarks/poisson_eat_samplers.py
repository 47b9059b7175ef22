"""Throughput of the relaxed Poisson samplers (draws per second, one thread, float64).

Compares EAT sigmoid / cubic and GSM at one rate, and the rate-bucketed EAT against a single block on
heterogeneous rates (the P-VAE / POGLM case), where one large rate would otherwise set the number of
simulated arrivals for every entry.
"""

from __future__ import annotations

import time

import torch

from repro.papers.poisson_eat.relaxations import eat_sample, relaxed_sample

N = 100_000


def rate_per_second(fn, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return N / best


def main() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    rate = torch.full((N,), 5.0, dtype=torch.float64)
    for method in ("eat_sigmoid", "eat_cubic", "gsm"):
        for tau in (0.1, 0.5, 1.0):
            print(
                f"{method:12s} rate 5 tau {tau}: {rate_per_second(lambda: relaxed_sample(rate, tau, method)):,.0f} draws/s"
            )
    mixed = torch.exp(torch.empty(N, dtype=torch.float64).uniform_(-6, 3))
    for buckets in (1, 8, 32):
        speed = rate_per_second(lambda: eat_sample(mixed, 0.5, "cubic", buckets=buckets))
        print(f"eat_cubic, log-uniform rates in [e^-6, e^3], {buckets:2d} bucket(s): {speed:,.0f} draws/s")


if __name__ == "__main__":
    main()
