"""Multi-step modular arithmetic problems from seeded structural templates, and their token vocabulary.

A template fixes the program's structure: how many steps, which operator each step applies and which earlier
variables (or a constant) it reads. A problem draws the constants. The question is the program, the chain of
thought is one line per step with its value ("c=b*a=4"), the answer is the last variable's value. Values are
taken mod ``modulus`` (at most 10) so every number is one token and a tiny model can learn the one-step tables;
composing 2-5 steps without writing the intermediate values down is what makes the chain of thought useful.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

OPS = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y}
VARS = "abcdef"
SPECIAL = ["<pad>", "<bos>", "<eos>", "<cot>", "<ans>", ";", "="]
BASE_VOCAB = SPECIAL + list(OPS) + [str(d) for d in range(10)] + list(VARS)


@dataclass(frozen=True)
class Template:
    """Steps after the first assignment: (operator, left operand, right operand); an operand is a variable
    index or ``None`` for a drawn constant."""

    id: int
    steps: tuple[tuple[str, int | None, int | None], ...]


@dataclass(frozen=True)
class Problem:
    template: int
    question: tuple[str, ...]
    steps: tuple[tuple[str, ...], ...]
    answer: str


def make_templates(count: int, min_steps: int, max_steps: int, seed: int, earlier_share: float = 0.0) -> list[Template]:
    """``count`` distinct templates, step counts cycling from ``min_steps`` to ``max_steps``. Each step reads
    the previous variable and, with probability ``earlier_share``, an earlier variable instead of a constant."""
    rng = np.random.default_rng(seed)
    out, seen = [], set()
    for n in range(min_steps, max_steps + 1):
        per_count = len([k for k in range(count) if min_steps + k % (max_steps - min_steps + 1) == n])
        possible = len(OPS) ** (n - 1) * (1 if earlier_share == 0 else int(np.prod([k + 1 for k in range(2, n)])))
        if per_count > possible:
            raise ValueError(f"{count} templates need {per_count} with {n} variables, but only {possible} exist")
    while len(out) < count:
        n = min_steps + len(out) % (max_steps - min_steps + 1)
        steps = []
        for k in range(1, n):
            right = int(rng.integers(k)) if k > 1 and rng.random() < earlier_share else None
            steps.append((str(rng.choice(list(OPS))), k - 1, right))
        key = tuple(steps)
        if key not in seen:
            seen.add(key)
            out.append(Template(len(out), key))
    return out


def operand(value: int | None, const: int) -> str:
    return VARS[value] if value is not None else str(const)


def make_problem(template: Template, rng: np.random.Generator, modulus: int) -> Problem:
    """Draw the constants of ``template``; values mod ``modulus``."""
    values = [int(rng.integers(modulus))]
    question = [VARS[0], "=", str(values[0]), ";"]
    steps = []
    for k, (op, left, right) in enumerate(template.steps, start=1):
        const = int(rng.integers(1, modulus))
        x = values[left]
        y = values[right] if right is not None else const
        values.append(OPS[op](x, y) % modulus)
        lhs = [VARS[k], "=", operand(left, const), op, operand(right, const)]
        question += lhs + [";"]
        steps.append(tuple(lhs + ["=", str(values[-1])]))
    return Problem(template.id, tuple(question), tuple(steps), str(values[-1]))


def step_text(step: tuple[str, ...]) -> str:
    """A CoT line as rendered: ``b = a + 3 = 0``."""
    return " ".join(step)


def vocabulary(codebook: int) -> list[str]:
    """Base tokens then the latent codes ``z0..z{codebook-1}`` (the LM's vocabulary is extended by them)."""
    return BASE_VOCAB + [f"z{i}" for i in range(codebook)]
