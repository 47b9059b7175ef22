"""Test setup: import the checkout's own code (not another installed copy), keep torch to one thread, and
the one end-to-end run of the embedded default that every e2e test shares."""

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

import pytest  # noqa: E402
from workflow_tools import commit_copy, copy_workflow, snakemake  # noqa: E402


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
