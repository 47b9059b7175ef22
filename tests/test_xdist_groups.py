"""The test suite's split over pytest-xdist workers (tests/conftest.py): modules that share a session run go
to one worker, so that run is built once; a pytest whose nodeid drops xdist's group suffix builds it twice."""

from __future__ import annotations

from pathlib import Path

pytest_plugins = ["pytester"]

CONFTEST = (Path(__file__).parent / "conftest.py").read_text()
GROUPING = CONFTEST[CONFTEST.index("# Session fixtures that run") : CONFTEST.index("@pytest.fixture(autouse=True")]
SHARED = """
@pytest.fixture(scope="session")
def default_run(tmp_path_factory):
    (tmp_path_factory.getbasetemp().parent.parent / f"built-{os.getpid()}").touch()
"""


def test_modules_sharing_the_default_run_build_it_once_over_two_workers(pytester):
    pytester.makeconftest("import os\nimport pytest\n" + GROUPING + SHARED)
    for i in range(3):
        pytester.makepyfile(**{f"test_shared{i}": "def test_a(default_run):\n    pass\ndef test_b():\n    pass\n"})
    for i in range(6):
        pytester.makepyfile(**{f"test_unit{i}": "def test_c():\n    pass\n"})
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadgroup", "--no-loadscope-reorder", "-p", "xdist")
    result.assert_outcomes(passed=12)
    assert len(list(pytester.path.parent.rglob("built-*"))) == 1, "the shared run was built on both workers"
