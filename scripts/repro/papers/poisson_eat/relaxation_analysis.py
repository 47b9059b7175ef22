"""Stage: the data-free parts of the paper in one job (one torch start-up): fidelity and gradient quality."""

from __future__ import annotations

from repro.papers.poisson_eat import fidelity, gradients
from repro.workflow.io import write_json


def main(job) -> None:
    settings, seed = job.params.settings, int(job.params.seed)
    write_json(job.output.fidelity, fidelity.analyse(settings["fidelity"], seed))
    write_json(job.output.gradients, gradients.analyse(settings["gradients"], seed))
