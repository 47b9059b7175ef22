"""SP-Mind's paper claims fail on the counterfactuals the paper denies."""

from __future__ import annotations

import pytest

from repro.papers.sp_mind.claims import CLAIMS
from repro.reporting.claims import verdict

TASKS = [f"sp{i:03d}" for i in range(32)]


def per_task(successes: int) -> dict[str, bool]:
    return {t: i < successes for i, t in enumerate(TASKS)}


def metrics(**overrides) -> dict:
    per = {
        "retrieval": per_task(30),
        "retrieval_no_verify": per_task(12),
        "retrieval_no_docs": per_task(14),
        "random_no_verify": per_task(1),
    } | overrides
    return {
        "per_task": per,
        "success": {"reference": 1.0},
        "grader_rerun_agreement": 1.0,
        "phenotype_paths_mismatch": 0,
    }


def test_claims_pass_on_a_run_where_the_agent_wins():
    for claim in (
        "sp_mind_verify_revise_beats_no_verification",
        "sp_mind_planner_beats_random_tools",
        "sp_mind_skills_docs_help",
    ):
        assert verdict(CLAIMS, claim, metrics()) == "pass"


@pytest.mark.counterfactual("sp-mind", "sp_mind_verify_revise_beats_no_verification")
def test_verification_claim_fails_when_revising_changes_nothing():
    assert verdict(CLAIMS, "sp_mind_verify_revise_beats_no_verification", metrics(retrieval=per_task(12))) == "fails"


@pytest.mark.counterfactual("sp-mind", "sp_mind_planner_beats_random_tools")
def test_planner_claim_fails_when_the_planner_is_no_better_than_random():
    assert verdict(CLAIMS, "sp_mind_planner_beats_random_tools", metrics(retrieval_no_verify=per_task(1))) == "fails"


@pytest.mark.counterfactual("sp-mind", "sp_mind_skills_docs_help")
def test_docs_claim_fails_when_names_alone_do_as_well():
    assert verdict(CLAIMS, "sp_mind_skills_docs_help", metrics(retrieval_no_docs=per_task(30))) == "fails"
