"""Final answers must parse as the role's contract (kbopt.contracts); otherwise they are sent back."""

from __future__ import annotations

from pathlib import Path

from kbopt.agents import roles
from kbopt.agents.runner import contract_problems
from tests.agents.conftest import RunnerFactory
from tests.agents.scripted import ScriptedAPI, text

APPLIED = """\
## Optimization Applied: split-kv-decode

### Prerequisites Checked
- [x] Code compatibility verified
- [x] Hardware requirements met

### Implementation
- Specialist: kernel-triton-specialist
- Changes: 8 KV splits and a combine kernel

### Validation
| Metric | Before | After | Change |
|--------|--------|-------|--------|
| Latency | 2.0 ms | 1.0 ms | -50% |

### Result
SUCCESS: Achieved 50% improvement
"""


def test_a_report_off_contract_is_sent_back_with_the_parser_problems(
    project: Path, make_runner: RunnerFactory
) -> None:
    api = ScriptedAPI({roles.ORCHESTRATOR: [[text("It went well, 2x faster.")], [text(APPLIED)]]})
    result = make_runner(api, contract_retries=2).run_request("Apply split-KV")
    assert result.text == APPLIED and result.contract_ok
    retry = api.requests[1][1]["messages"][-1]["content"]
    assert "## Optimization Applied:" in retry and "has no" in retry


def test_autopilot_expects_the_summary_and_gives_up_after_the_retries(
    project: Path, make_runner: RunnerFactory
) -> None:
    api = ScriptedAPI({roles.ORCHESTRATOR: [[text(APPLIED)], [text(APPLIED)]]})
    result = make_runner(api, contract_retries=1).run_autopilot(
        "Primary bottleneck: memory-bound\nEvidence: x\nRecommendations:\n1. [High] A\n"
    )
    assert not result.contract_ok  # an Applied report is not the autopilot's Summary
    assert len(api.requests) == 2
    assert "## Optimization Summary" in api.requests[1][1]["messages"][-1]["content"]


def test_specialists_are_checked_against_their_own_contract(
    project: Path, make_runner: RunnerFactory
) -> None:
    bad_profile = "## Profile: toy toy_v1 | b=32, s=1, t=4096\n### Bottleneck: Sideways-bound\n"
    api = ScriptedAPI(
        {
            roles.PROFILER: [
                [text(bad_profile)],
                [text("## Profile: toy toy_v1 | b=32, s=1, t=4096\n")],
            ]
        }
    )
    runner = make_runner(api, contract_retries=1)
    runner.run_agent(roles.PROFILER, "Profile toy toy_v1")
    assert contract_problems("profile", bad_profile)
    assert len(api.requests) == 2


def test_contract_problems_names_what_is_wrong() -> None:
    assert contract_problems("applied", APPLIED) == []
    problems = contract_problems("applied", "## Optimization Applied: x\n### Result\nmeh\n")
    assert any("Validation" in p for p in problems)
    assert contract_problems("new_version", "nothing") == [
        "the answer has no `## New Version:` section"
    ]
