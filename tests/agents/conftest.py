"""Fixtures for the agent tests: a project copy in tmp_path and a runner on a scripted API."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kbopt.agents.remote import RemoteContext, make_executor
from kbopt.agents.runner import AgentConfig, AgentRunner
from kbopt.agents.tools import ToolContext
from kbopt.store import Store
from kbopt.workflow.demo import TOY_SPEC
from tests.agents.scripted import ScriptedAPI

# A toy kernel whose fake-backend figure follows the tile size in the kernel file, so a
# change of the file really changes the measured number (latency = 4096 / BLOCK).
TOY_KERNEL = (
    "BLOCK = 64\n"
    "# read by kbopt's fake measurement backend (`kbopt bench --backend fake`)\n"
    "FAKE_DURATION_US = 4096 / BLOCK\n"
    'FAKE_FLOOR_US = {"decode": 55.0, "spec": 880.0}\n\n\n'
    "def launch(n):\n    return (n + BLOCK - 1) // BLOCK\n"
)


@pytest.fixture
def project(kb_copy: Path) -> Path:
    """The bundled catalog plus a toy kernel (spec, one version) and a test."""
    toy = kb_copy / "kernels" / "toy"
    toy.mkdir(parents=True)
    (kb_copy / "kernels" / "__init__.py").write_text("")
    (toy / "__init__.py").write_text("")
    (toy / "spec.py").write_text(TOY_SPEC)
    (toy / "toy_v1.py").write_text(TOY_KERNEL)
    tests = kb_copy / "tests" / "toy"
    tests.mkdir(parents=True)
    (tests / "test_toy.py").write_text(
        "from kernels.toy.toy_v1 import launch\n\n\ndef test_launch():\n    assert launch(128) >= 1\n"
    )
    return kb_copy


RunnerFactory = Callable[..., AgentRunner]


@pytest.fixture
def make_runner(project: Path) -> RunnerFactory:
    def factory(
        api: ScriptedAPI, *, remote: RemoteContext | None = None, **config: object
    ) -> AgentRunner:
        store = Store(project)
        ctx = ToolContext(root=project, store=store, executor=make_executor(project, remote))
        # Contract checking is tested on its own (test_contracts_enforced); elsewhere the
        # scripts answer with short texts.
        config.setdefault("contract_retries", 0)
        cfg = AgentConfig(**config)  # type: ignore[arg-type]
        return AgentRunner(api.client(), cfg, ctx, remote=remote)

    return factory
