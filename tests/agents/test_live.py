"""One real conversation with the Anthropic API; runs only when a key is present."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kbopt.agents import roles
from kbopt.agents.remote import LocalExecutor
from kbopt.agents.runner import AgentConfig, AgentRunner, make_client
from kbopt.agents.tools import ToolContext
from kbopt.store import Store

pytestmark = pytest.mark.skipif(
    not os.environ.get("ANTHROPIC_API_KEY"), reason="needs ANTHROPIC_API_KEY (live API test)"
)


def test_live_orchestrator_routes_and_reports(kb_copy: Path) -> None:
    store = Store(kb_copy)
    ctx = ToolContext(root=kb_copy, store=store, executor=LocalExecutor(kb_copy))
    config = AgentConfig.from_env(
        max_turns=4, max_tokens=1024, max_delegations=1, contract_retries=0
    )
    runner = AgentRunner(make_client(), config, ctx)
    task = (
        "Planning only, do not delegate: call route_request for 'Generate a CuTe DSL kernel "
        "for GEMM' and answer with the specialist name it returns."
    )
    text = runner.run_agent(roles.ORCHESTRATOR, task)
    assert roles.CUTE in text
    assert runner.usage.calls >= 2 and runner.usage.input_tokens > 0
