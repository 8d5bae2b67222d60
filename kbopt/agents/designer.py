"""The kernel-designer agent as the cycle's DESIGN step: `kbopt cycle ... --designer agent`.

`kbopt.workflow` drives the cycle (profile, select, strategize, verify, evaluate, learn)
and hands one Optimization Task at a time to a `Designer`.  `AgentDesigner` sends that
task to the kernel-designer agent - the Optimization Task contract followed by the launch
template - and parses the agent's answer as the New Version contract.  The cycle has
backed up the kernel's files before DESIGN and restores them on failure.

`register()` makes `--designer agent[:language]` known to `make_designer`; the agent CLI
calls it when the command line is built (no import-time side effects).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kbopt.agents import roles
from kbopt.errors import KbError

NAME = "agent"


class AgentDesigner:
    name = NAME

    def __init__(
        self,
        root: Path,
        language: str | None = None,
        runner_factory: Callable[[Path], Any] | None = None,
    ):
        self.root = root
        self.language = language
        self._runner_factory = runner_factory or default_runner
        self.last_report = ""

    def propose(self, record: Any, ranked: Sequence[Mapping[str, Any]]) -> Any:
        """The best-ranked opportunity not tried yet (in the strategy's order)."""
        from kbopt.workflow.designers import DesignerUnavailable, Proposal

        if self._runner_factory is default_runner:
            # Checked before an attempt is opened: without a key no attempt can happen, and
            # counting one as a correctness failure would hide why the run stopped.
            from kbopt.agents.runner import API_KEY_ENV

            if not os.environ.get(API_KEY_ENV):
                raise DesignerUnavailable(
                    f"the agent designer cannot run: {API_KEY_ENV} is not set (export an "
                    "Anthropic API key, or use --designer catalog, human or scripted:PLAN.json)"
                )
        tried = {a.optimization for a in record.attempts}
        for n, r in enumerate(ranked, 1):
            if r["id"] in tried:
                continue
            return Proposal(
                optimization=str(r["id"]),
                new_version=f"{record.current_version}_a{len(record.attempts) + 1}",
                language=self.language or record.selected_language,
                title=str(r.get("title", r["id"])),
                link=str(r["path"]) if r.get("path") else None,
                rationale=f"ranked #{n} by the strategy; trigger {r.get('trigger') or 'text match'}",
            )
        return None

    def design(self, task: Any, ctx: Any) -> Any:
        """Run the kernel-designer agent on the task; its answer must be a New Version."""
        from kbopt.contracts.new_version import NewVersion

        runner = self._runner_factory(self.root)
        folder = getattr(getattr(ctx, "spec", None), "folder", None)
        tools = getattr(runner, "ctx", None)
        if folder is not None and tools is not None:
            # Writes only where the cycle's backup reaches (the kernel's folder and its
            # devlog), so a rollback undoes all of them; a path outside the project is out
            # of the tools' reach anyway.
            root = tools.root.resolve()
            devlog = getattr(ctx, "devlog_path", None)
            scope = []
            for path in (folder, devlog) if devlog is not None else (folder,):
                with contextlib.suppress(ValueError):
                    scope.append(Path(path).resolve().relative_to(root))
            tools.write_scope = tuple(scope)
        prompt = f"{task.render()}\n{task.designer_prompt()}"
        self.last_report = runner.run_agent(roles.KERNEL_DESIGNER, prompt)
        start = self.last_report.find("## New Version:")
        if start < 0:
            raise KbError(
                "the kernel-designer agent did not answer with the New Version contract "
                "(`## New Version: <kernel> <version>`)"
            )
        return NewVersion.parse(self.last_report[start:], path="<kernel-designer answer>")


def default_runner(root: Path) -> Any:
    """A runner on the real API (key checked first), the environment's model and limits."""
    from kbopt.agents.remote import RemoteContext, make_executor
    from kbopt.agents.runner import AgentConfig, AgentRunner, make_client
    from kbopt.agents.tools import ToolContext
    from kbopt.store import Store

    client = make_client()
    remote = RemoteContext.from_env()
    store = Store(root)
    ctx = ToolContext(root=store.root, store=store, executor=make_executor(store.root, remote))
    return AgentRunner(client, AgentConfig.from_env(), ctx, remote=remote)


def register() -> None:
    from kbopt.workflow.designers import register_designer

    register_designer(NAME, lambda arg, root: AgentDesigner(root, arg or None))
