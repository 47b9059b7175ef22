"""GSM-symbolic templates read from reasoning-gym's files (in the real layout) without installing the package."""

from __future__ import annotations

from pathlib import Path

import pytest

from repro.data.language.corpora import GSM_DIR, GSM_FILES, GSM_UTILS, gsm_problems, shakespeare_text
from repro.workflow.io import InputError

GENERATOR = """
from random import Random
from reasoning_gym.utils import format_number, is_integer


def generate_{i}(rng: Random, difficulty: float = 1.0):
    a, b = rng.randint(2, 9), rng.randint(2, 9)
    cot = f"Tom has {{a}} bags of {{b}} apples: {{a}} * {{b}} = {{a * b}} apples\\nHe eats one: {{a * b}} - 1 = {{a * b - 1}}\\n#### {{a * b - 1}}"
    return {{"question": f"{{a}} bags of {{b}}, eat one?", "answer": format_number(a * b - 1),
            "metadata": {{"answer_cot": cot}}}}
"""


def write_layout(root: Path, line: str = "from reasoning_gym.utils import format_number, is_integer") -> Path:
    folder = root / GSM_DIR
    folder.mkdir(parents=True)
    (root / GSM_UTILS).write_text(
        "def format_number(x):\n    return str(int(x))\n\ndef is_integer(x):\n    return True\n"
    )
    for name, i in zip(GSM_FILES, (0, 50)):
        (folder / name).write_text(
            GENERATOR.format(i=i).replace("from reasoning_gym.utils import format_number, is_integer", line)
        )
    (folder / "gsm_symbolic.py").write_text("tasks_ok = [0, 50]\ntasks_need_fix = []\n")
    return root


def test_problems_carry_the_worked_steps_and_the_answer_they_end_in(tmp_path):
    problems = gsm_problems(write_layout(tmp_path), 6, seed=3)
    assert {p.template for p in problems} <= {0, 50}
    for p in problems:
        assert len(p.steps) == 2
        assert p.steps[-1].endswith(f"= {p.answer}")
    assert problems == gsm_problems(tmp_path, 6, seed=3)


def test_changed_template_files_and_missing_plays_are_named(tmp_path):
    write_layout(tmp_path, "from reasoning_gym.helpers import format_number, is_integer")
    with pytest.raises(InputError, match="template file changed"):
        gsm_problems(tmp_path, 1, seed=0)
    with pytest.raises(InputError, match="play 'hamlet' not found"):
        shakespeare_text(tmp_path, "hamlet")
