"""Text corpora of the language source: Shakespeare's plays and reasoning-gym's GSM-symbolic templates.

The GSM-symbolic generators (reasoning-gym 0.1.25, Apache-2.0) are 100 GSM8K problems rewritten as seeded
Python templates that return the question, the worked answer (one line per step, GSM8K style, ending in
``#### answer``) and the integer result. They are read from the extracted package files and executed with
the one helper module they import (``reasoning_gym/utils.py``, standard library only); the package itself is
never installed (it pulls heavy dependencies).
"""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass
from pathlib import Path
from random import Random

from repro.workflow.io import InputError

GSM_DIR = "reasoning_gym/arithmetic/gsm_symbolic"
GSM_FILES = ("generators_00_49.py", "generators_50_99.py")
GSM_UTILS = "reasoning_gym/utils.py"
GSM_IMPORT = "from reasoning_gym.utils import format_number, is_integer"
SHAKESPEARE = "shksprdata/texts/{play}_gut.txt"


@dataclass(frozen=True)
class GSMProblem:
    """One generated GSM-style problem: its template, question, worked steps and final answer."""

    template: int
    seed: int
    question: str
    steps: tuple[str, ...]
    answer: str


def _read(path: Path) -> str:
    if not path.is_file():
        raise InputError(path, "missing (package-data entry reasoning-gym)")
    return path.read_text()


def gsm_templates(root: str | Path) -> dict[int, types.FunctionType]:
    """``{template id: generate(rng, difficulty)}`` for the templates reasoning-gym marks usable (``tasks_ok``)."""
    root = Path(root)
    utils = types.ModuleType("gsm_utils")
    exec(compile(_read(root / GSM_UTILS), str(root / GSM_UTILS), "exec"), utils.__dict__)
    generators: dict[int, types.FunctionType] = {}
    for name in GSM_FILES:
        path = root / GSM_DIR / name
        source = _read(path)
        if GSM_IMPORT not in source:
            raise InputError(path, f"expected the line {GSM_IMPORT!r}; the template file changed")
        namespace = {"format_number": utils.format_number, "is_integer": utils.is_integer, "__name__": "gsm"}
        exec(compile(source.replace(GSM_IMPORT, ""), str(path), "exec"), namespace)
        generators |= {int(k.split("_")[1]): v for k, v in namespace.items() if k.startswith("generate_")}
    ok_path = root / GSM_DIR / "gsm_symbolic.py"
    tree = ast.parse(_read(ok_path))
    ok = next(
        (ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "tasks_ok"),
        None,
    )
    if ok is None:
        raise InputError(ok_path, "no tasks_ok list")
    return {i: generators[i] for i in ok if i in generators}


def gsm_problems(root: str | Path, count: int, seed: int, templates: list[int] | None = None) -> list[GSMProblem]:
    """``count`` problems drawn as reasoning-gym draws them (template chosen by a seeded rng, then seed + i)."""
    generators = gsm_templates(root)
    ids = sorted(generators) if templates is None else templates
    chooser = Random(seed)
    problems = []
    for i in range(count):
        template = chooser.choice(ids)
        example = generators[template](Random(seed + i), 1.0)
        worked = example["metadata"]["answer_cot"].strip().split("\n")
        steps = tuple(line for line in worked if line.strip() and not line.startswith("####"))
        problems.append(GSMProblem(template, seed + i, example["question"], steps, str(example["answer"])))
    return problems


def shakespeare_text(root: str | Path, play: str) -> str:
    """The Project Gutenberg text of one play from the ``shakespeare`` package-data entry (latin-1)."""
    path = Path(root) / SHAKESPEARE.format(play=play)
    if not path.is_file():
        raise InputError(path, f"play {play!r} not found (package-data entry shakespeare)")
    return path.read_text(encoding="latin-1")
