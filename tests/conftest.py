"""Test setup: import the checkout's own code (not another installed copy), keep torch to one thread, the
one end-to-end run of the embedded default that every e2e test shares, and how the tests are shared between
pytest-xdist's workers (pyproject's ``addopts``: two workers, one per core)."""

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

import pytest  # noqa: E402
from workflow_tools import commit_copy, copy_workflow, snakemake  # noqa: E402

# Session fixtures that run the workflow: every module that uses one goes to the same worker, so each runs once.
SHARED_RUNS = ("default_run", "rehearsal_run")


def _worker_group(module_items: list[pytest.Item]) -> tuple[int, str]:
    """(rank, name) of the xdist group a test module joins: the module of a shared run's group, else its own.

    Rank orders the queue longest first: the two shared runs (about 15 and 11 minutes here), then the other
    modules that run the workflow (marked ``e2e`` or ``slurm``, 1-7 minutes each), then the unit tests (seconds),
    which fill the gaps at the end."""
    fixtures = {name for item in module_items for name in item.fixturenames}
    for rank, run in enumerate(SHARED_RUNS):
        if run in fixtures:
            return rank, run
    slow = any(item.get_closest_marker(m) for item in module_items for m in ("e2e", "slurm"))
    return (len(SHARED_RUNS) if slow else len(SHARED_RUNS) + 1), module_items[0].module.__name__


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]):
    """Keep each test module whole on one xdist worker (its module fixtures are built once) and hand out the
    longest work first (``--dist loadgroup --no-loadscope-reorder`` in pyproject: groups in this order).

    A wrapper, so that this runs before xdist's own hook, which reads the ``xdist_group`` marks set here (a
    ``tryfirst`` conftest hook ran after it: both workers then built the default run); without xdist it only
    reorders whole modules."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    groups = {path: _worker_group(module_items) for path, module_items in modules.items()}
    order = sorted(modules, key=lambda path: groups[path][0])
    items[:] = [item for path in order for item in modules[path]]
    for item in items:
        item.add_marker(pytest.mark.xdist_group(groups[item.nodeid.split("::")[0]][1]))
    return (yield)


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    try:
        import torch
    except ImportError:
        yield
        return
    torch.set_num_threads(1)
    yield


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def default_run(tmp_path_factory) -> Path:
    """A copy of the workflow after the README's run command: every enabled paper, scoreboard, report.

    Session-scoped so that the e2e tests (results, reruns after code and data updates, provenance, the
    report in a browser) share one run. The copy is a git repository of its own, so provenance names a commit.
    """
    work = copy_workflow(tmp_path_factory.mktemp("e2e") / "wf")
    commit_copy(work)
    start = time.perf_counter()
    snakemake(work, "--cores", "2", "--report-after-run", "--report", "results/report.html", timeout=3600)
    print(f"embedded default end to end: {time.perf_counter() - start:.1f} s")
    return work


@pytest.fixture(autouse=True)
def _restore_torch_default_dtype():
    """Some stages compute in float64 by setting torch's default dtype (their own process in the workflow);
    when a test calls them in-process, put the default back so later tests see torch's float32."""
    yield
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_default_dtype(torch.float32)
