"""The kernel-designer agent plugged into the cycle's DESIGN step."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from kbopt.agents import roles
from kbopt.agents.designer import AgentDesigner, register
from kbopt.contracts.task import OptimizationTask
from kbopt.errors import KbError
from kbopt.workflow.designers import make_designer
from tests.agents.conftest import TOY_KERNEL, RunnerFactory
from tests.agents.scripted import ScriptedAPI, text, tool_use

TASK = """\
## Optimization Task: toy toy_v1 -> toy_v2
### Current Bottleneck: Latency-bound -- too few CTAs
### Optimizations to Apply:
1. larger-tiles -- fewer, fuller programs -- docs/knowledge/optimizations/split-kv-decode.md

### Constraints
- language: triton
"""

ANSWER = """\
Done.

## New Version: toy toy_v2
### Changes Applied:
- BLOCK 64 -> 128
### Files: Created kernels/toy/toy_v2.py
### Correctness: PASS

### Trial Configurations Checked
1. b=32, s=1, t=4096 -- decode default

### Devlog Entry Written: docs/kernels/toy.md
"""


def test_agent_designer_is_registered_for_the_cycle(project: Path) -> None:
    register()
    designer = make_designer("agent:triton", project)
    assert isinstance(designer, AgentDesigner) and designer.language == "triton"


def test_design_runs_the_kernel_designer_and_parses_its_new_version(
    project: Path, make_runner: RunnerFactory
) -> None:
    new_kernel = TOY_KERNEL.replace("BLOCK = 64", "BLOCK = 128")
    api = ScriptedAPI(
        {
            roles.KERNEL_DESIGNER: [
                [tool_use("write_file", {"path": "kernels/toy/toy_v2.py", "content": new_kernel})],
                [tool_use("run_tests", {"path": "tests/toy"})],
                [text(ANSWER)],
            ]
        }
    )
    designer = AgentDesigner(project, "triton", runner_factory=lambda root: make_runner(api))
    try:
        task = OptimizationTask.parse(TASK)
    except KbError as exc:  # the task contract's exact shape belongs to kbopt.contracts
        pytest.skip(f"task sample does not match the contract: {exc}")
    nv = designer.design(task, SimpleNamespace())
    assert (nv.kernel, nv.version, nv.correct) == ("toy", "toy_v2", True)
    assert (project / "kernels/toy/toy_v2.py").read_text() == new_kernel
    prompt = api.first_user_message(roles.KERNEL_DESIGNER)
    assert "## Optimization Task: toy toy_v1 -> toy_v2" in prompt
    assert "Create toy toy_v2 from toy_v1." in prompt


def test_as_the_cycle_s_designer_the_agent_writes_only_the_kernel_s_folder(
    project: Path, make_runner: RunnerFactory
) -> None:
    """The cycle backs up the kernel's folder (and the devlog) and restores it on a
    rollback; a write anywhere else would outlive the rollback, so it is refused."""
    api = ScriptedAPI(
        {
            roles.KERNEL_DESIGNER: [
                [tool_use("write_file", {"path": "tools/helper.py", "content": "X = 1\n"})],
                [tool_use("write_file", {"path": "kernels/toy/toy_v2.py", "content": TOY_KERNEL})],
                [text(ANSWER)],
            ]
        }
    )
    designer = AgentDesigner(project, "triton", runner_factory=lambda root: make_runner(api))
    task = SimpleNamespace(render=lambda: "task", designer_prompt=lambda: "prompt")
    ctx = SimpleNamespace(
        spec=SimpleNamespace(folder=project / "kernels" / "toy"),
        devlog_path=project / "docs" / "kernels" / "toy.md",
    )
    nv = designer.design(task, ctx)
    assert nv.version == "toy_v2" and (project / "kernels/toy/toy_v2.py").exists()
    assert not (project / "tools/helper.py").exists()
    refusals = [str(r) for r in api.tool_results(roles.KERNEL_DESIGNER) if "outside" in str(r)]
    assert refusals and "kernels/toy, docs/kernels/toy.md" in refusals[0]


def test_design_without_the_contract_is_an_error(project: Path, make_runner: RunnerFactory) -> None:
    api = ScriptedAPI({roles.KERNEL_DESIGNER: [[text("I changed some things.")]]})
    designer = AgentDesigner(project, runner_factory=lambda root: make_runner(api))
    task = SimpleNamespace(render=lambda: "task", designer_prompt=lambda: "prompt")
    with pytest.raises(KbError, match="New Version contract"):
        designer.design(task, SimpleNamespace())


def test_propose_takes_the_best_untried_opportunity(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")  # without one, propose stops the cycle
    designer = AgentDesigner(project, "cute-dsl")
    record = SimpleNamespace(
        attempts=[SimpleNamespace(optimization="a")],
        current_version="cute_v1",
        selected_language=None,
    )
    ranked = [
        {"id": "a", "title": "A"},
        {"id": "b", "title": "B", "path": "p.md", "trigger": "x > 1"},
    ]
    p = designer.propose(record, ranked)
    assert (p.optimization, p.new_version, p.language, p.link) == (
        "b",
        "cute_v1_a2",
        "cute-dsl",
        "p.md",
    )
    record.attempts.append(SimpleNamespace(optimization="b"))
    assert designer.propose(record, ranked) is None
