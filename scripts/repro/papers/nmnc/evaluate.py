"""Stage ``nmnc_evaluate``: metrics.json from the runs, then the claims."""

from __future__ import annotations

from repro.papers.nmnc.claims import CLAIMS
from repro.papers.nmnc.metrics import summarise
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import read_json, write_json


def main(job) -> None:
    metrics = summarise(read_json(job.input.runs), job.params.settings)
    write_json(job.output.metrics, metrics)
    write_claims(
        job.output.claims,
        "nmnc",
        evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported)),
    )
