"""SP-Mind's paper claims fail on the counterfactuals the paper denies, and are inconclusive when the agent
does no better than random calls."""

from __future__ import annotations

import pytest

from repro.papers.sp_mind.claims import CLAIMS, LEARNED
from repro.reporting.claims import verdict

TASKS = [f"t{i:02d}" for i in range(18)]


def per_task(successes: int) -> dict[str, float]:
    return {t: float(i < successes) for i, t in enumerate(TASKS)}


def metrics(**overrides) -> dict:
    per = {
        "agent": per_task(13),
        "agent_no_verify": per_task(6),
        "react": per_task(6),
        "agent_no_docs": per_task(7),
        "random": {t: 0.02 for t in TASKS},
    } | overrides
    return {
        "per_task": per,
        "success": {"reference": 1.0},
        "grader_rerun_agreement": 1.0,
        "phenotype_paths_mismatch": 0,
        "verifier_rejects_reference": 0,
    }


PAPER = ("sp_mind_verify_revise_beats_no_verification", "sp_mind_skills_docs_help", "sp_mind_agent_beats_react")


def test_claims_pass_on_a_run_where_the_agent_wins_and_the_agent_learned():
    assert verdict(CLAIMS, LEARNED, metrics()) == "pass"
    for claim in PAPER:
        assert verdict(CLAIMS, claim, metrics()) == "pass"


@pytest.mark.counterfactual("sp-mind", "sp_mind_verify_revise_beats_no_verification")
def test_verification_claim_fails_when_revising_changes_nothing():
    assert verdict(CLAIMS, PAPER[0], metrics(agent_no_verify=per_task(13))) == "fails"
    # Revision that fixes as many tasks as it breaks is no gain either.
    broken = {t: float(6 <= i < 19) for i, t in enumerate(TASKS)}
    assert verdict(CLAIMS, PAPER[0], metrics(agent_no_verify=broken)) == "fails"


@pytest.mark.counterfactual("sp-mind", "sp_mind_skills_docs_help")
def test_docs_claim_fails_when_signatures_alone_do_as_well():
    assert verdict(CLAIMS, PAPER[1], metrics(agent_no_docs=per_task(13))) == "fails"


@pytest.mark.counterfactual("sp-mind", "sp_mind_agent_beats_react")
def test_react_claim_fails_when_the_plain_loop_does_as_well():
    assert verdict(CLAIMS, PAPER[2], metrics(react=per_task(12))) == "fails"


def test_claims_are_inconclusive_when_the_agent_is_no_better_than_random_calls():
    weak = metrics(agent=per_task(2), agent_no_verify=per_task(0), react=per_task(0), agent_no_docs=per_task(0))
    assert verdict(CLAIMS, LEARNED, weak) == "fails"
    for claim in PAPER:
        assert verdict(CLAIMS, claim, weak) == "inconclusive"


def test_checks_fail_on_a_broken_harness():
    assert (
        verdict(CLAIMS, "sp_mind_verifier_accepts_reference_calls", metrics() | {"verifier_rejects_reference": 1})
        == "fails"
    )
    assert verdict(CLAIMS, "sp_mind_reference_solves_all", metrics() | {"success": {"reference": 0.9}}) == "fails"
