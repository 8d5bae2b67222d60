"""The cycle engine with the kernel-designer agent as its DESIGN step (fake backend, scripted API).

The cycle profiles, ranks, hands one Optimization Task to the agent, verifies the new
version with real (fake-backend) measurements, keeps it or restores every byte, and
learns.  The agent's replies are scripted; what the cycle does with them is not.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from workflow_fixtures import make_project, toy_configs, version_source

from kbopt.agents import roles
from kbopt.agents.designer import AgentDesigner
from kbopt.agents.remote import LocalExecutor
from kbopt.agents.runner import AgentConfig, AgentRunner
from kbopt.agents.tools import ToolContext
from kbopt.bench.backend import FakeBackend
from kbopt.store import Store
from kbopt.workflow import cycle
from kbopt.workflow.record import AttemptStatus
from tests.agents.scripted import ScriptedAPI, text, tool_use


def _designer_script(decode: float, spec: float) -> list[Any]:
    """Write the version the task names (timings chosen by the test), answer the contract."""
    state: dict[str, str] = {}

    def write(body: dict[str, Any]) -> list[dict[str, Any]]:
        task = body["messages"][0]["content"]
        m = re.search(r"## Optimization Task: (\S+) (\S+) -> (\S+)", task)
        assert m, task
        state["kernel"], state["version"] = m.group(1), m.group(3)
        path = f"kernels/{m.group(1)}/{m.group(3)}.py"
        return [
            tool_use(
                "write_file", {"path": path, "content": version_source(m.group(3), decode, spec)}
            )
        ]

    def answer(body: dict[str, Any]) -> list[dict[str, Any]]:
        k, v = state["kernel"], state["version"]
        return [
            text(
                f"## New Version: {k} {v}\n### Changes Applied:\n- one optimization\n"
                f"### Files: Created kernels/{k}/{v}.py\n### Correctness: PASS\n\n"
                "### Trial Configurations Checked\n1. b=32, s=1, t=4096 -- decode\n\n"
                f"### Devlog Entry Written: docs/kernels/{k}.md\n"
            )
        ]

    return [write, answer]


def _run(root: Path, api: ScriptedAPI) -> cycle.Cycle:
    def runner(r: Path) -> AgentRunner:
        store = Store(r)
        ctx = ToolContext(root=r, store=store, executor=LocalExecutor(r))
        return AgentRunner(api.client(), AgentConfig(), ctx)

    c = cycle.start(
        root,
        kernel="toy",
        target="pct_of_floor>=99",
        start_version="toy_v1",
        backend=FakeBackend(root),
        designer=AgentDesigner(root, "triton", runner_factory=runner),
        designer_spec="agent:triton",
        configs=toy_configs(root),
        store=Store(root),
        run_id="agent1",
        max_iterations=1,
    )
    c.run()
    return c


def test_agent_designed_faster_version_is_kept(tmp_path: Path) -> None:
    make_project(tmp_path, [])
    api = ScriptedAPI({roles.KERNEL_DESIGNER: _designer_script(100.0, 800.0)})
    r = _run(tmp_path, api).record
    (attempt,) = r.attempts
    assert attempt.status is AttemptStatus.APPLIED, attempt.reason
    assert r.current_version == attempt.new_version == "toy_v1_a1"
    assert (tmp_path / "kernels/toy/toy_v1_a1.py").is_file()
    assert "## Optimization Task: toy toy_v1 -> toy_v1_a1" in api.first_user_message(
        roles.KERNEL_DESIGNER
    )


def test_agent_designed_regression_is_rolled_back(tmp_path: Path) -> None:
    make_project(tmp_path, [])
    api = ScriptedAPI({roles.KERNEL_DESIGNER: _designer_script(800.0, 6400.0)})
    r = _run(tmp_path, api).record
    (attempt,) = r.attempts
    assert attempt.status is AttemptStatus.ROLLED_BACK
    assert attempt.reason.startswith("regression")
    assert not (tmp_path / "kernels/toy/toy_v1_a1.py").exists()  # the created file is gone
    assert r.current_version == "toy_v1"
