"""Roles as data and the generated Claude Code files."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from kbopt.agents import roles
from kbopt.agents.claude_export import AGENTS_DIR, SKILLS_DIR, export, render_agent, stale
from kbopt.agents.tools import TOOLS

REPO = Path(__file__).resolve().parents[2]
SOURCE_NAMES = [
    "orchestrator",
    "profiler",
    "kernel-designer",
    "perf-torch-cuda-graph-specialist",
    "perf-profiling-specialist",
    "kernel-triton-specialist",
    "kernel-tileir-specialist",
    "kernel-cute-specialist",
]


def _front_matter(text: str) -> dict:
    _, fm, _ = text.split("---\n", 2)
    return yaml.safe_load(fm)


def test_role_names_are_the_sources_names() -> None:
    assert list(roles.ROLES) == SOURCE_NAMES
    assert set(roles.SPECIALISTS) == set(SOURCE_NAMES[3:])


def test_every_role_tool_and_skill_exists() -> None:
    for role in roles.ROLES.values():
        assert set(role.tools) <= set(TOOLS), role.name
        assert set(role.skills) <= set(roles.SKILLS), role.name


def test_orchestrator_cannot_edit_code_and_only_it_delegates() -> None:
    orch = roles.ROLES[roles.ORCHESTRATOR]
    assert not orch.edits_code and "read_file" not in orch.tools
    assert [r.name for r in roles.ROLES.values() if r.delegates] == [roles.ORCHESTRATOR]
    for name in roles.KERNEL_SPECIALISTS:
        assert roles.ROLES[name].edits_code


def test_skills_are_named_after_the_japanese_source() -> None:
    for name in ("profile-kernel", "design-kernel", "optimization-catalog"):
        assert name in roles.SKILLS
    for lang in ("cute-dsl", "cutile-dsl", "triton", "tileir"):
        assert f"design-{lang}-kernel" in roles.SKILLS
    assert "profile-kernel" in roles.ROLES[roles.PROFILER].skills
    assert "design-kernel" in roles.ROLES[roles.KERNEL_DESIGNER].skills
    for skill in roles.SKILLS.values():
        assert "kbopt " in skill.body, f"{skill.name} must call the kbopt CLI"


def test_prompts_carry_the_contracts_and_key_rules() -> None:
    orch = roles.ROLES[roles.ORCHESTRATOR].system_prompt()
    for needle in (
        "## Optimization Applied: <optimization_name>",
        "## Optimization Summary",
        "## Optimization Task: [kernel] [current] -> [new_version]",
        "never writes one",
        "unrelated",
        "Never browse or read skill directories",
        "more than 5% slower",
    ):
        assert needle in orch, needle
    assert (
        "## Profile: [kernel] [version] | [dim=X, dim=X, ...]"
        in roles.ROLES[roles.PROFILER].system_prompt()
    )
    assert (
        "## New Version: [kernel] [version]" in roles.ROLES[roles.KERNEL_DESIGNER].system_prompt()
    )
    for role in roles.ROLES.values():
        assert "list_exports" in role.system_prompt()  # A7 for everyone


def test_launch_templates() -> None:
    assert roles.profiler_launch("mla_decode", "triton_v3", {"b": 32, "s": 1, "t": 4096}) == (
        "Profile mla_decode triton_v3 at b=32, s=1, t=4096.\n"
        "Return compact summary per the output contract.\n"
        "Update the devlog performance section in docs/kernels/mla_decode.md."
    )
    task = roles.designer_launch("mla_decode", "cute_v2", "cute_v1", "cute-dsl", ["split KV"])
    assert "Language: cute-dsl." in task and "/design-cute-dsl-kernel" in task
    # the orchestrator, told to append the launch template to its task, is shown both
    prompt = roles.ROLES[roles.ORCHESTRATOR].system_prompt()
    assert "Create <kernel> <new version> from <current version>." in prompt
    assert "Profile <kernel> <version> at <dim>=<value>" in prompt


def test_generated_claude_files_in_the_repository_are_current() -> None:
    assert stale(REPO) == [], "run `kbopt agent export-claude`"


def test_stale_detects_edits_missing_files_and_unknown_agents(tmp_path: Path) -> None:
    assert export(tmp_path)
    assert stale(tmp_path) == [] and export(tmp_path) == []
    agent = tmp_path / AGENTS_DIR / "orchestrator.md"
    agent.write_text(agent.read_text() + "hand edit\n")
    (tmp_path / SKILLS_DIR / "design-kernel" / "SKILL.md").unlink()
    (tmp_path / AGENTS_DIR / "kernel-cuda-specialist.md").write_text("x")
    assert stale(tmp_path) == [
        ".claude/agents/orchestrator.md",
        ".claude/skills/design-kernel/SKILL.md",
        ".claude/agents/kernel-cuda-specialist.md (no such role)",
    ]
    shutil.rmtree(tmp_path / ".claude")


def test_agent_files_map_tools_to_claude_code() -> None:
    orch_text = render_agent(roles.ROLES[roles.ORCHESTRATOR])
    orch = _front_matter(orch_text)
    assert orch["name"] == "orchestrator"
    assert "Edit" in orch["disallowedTools"] and "Edit" not in orch["tools"]
    # no shell, so the catalog is reached through the kbopt MCP server registered in
    # .mcp.json: ranking for STRATEGIZE, the update protocol for LEARN
    tools = [t.strip() for t in orch["tools"].split(",")]
    for name in ("search", "recommend", "record_evidence", "narrow_conditions", "new_entry"):
        assert f"mcp__kbopt__{name}" in tools, name
    # and it loads no skill file (its specialists have their own)
    assert "skills" not in orch and "Skills preloaded" not in orch_text
    assert not roles.ROLES[roles.ORCHESTRATOR].skills
    triton = _front_matter(render_agent(roles.ROLES[roles.TRITON]))
    assert "Edit" in triton["tools"] and triton["skills"] == [
        "design-kernel",
        "design-triton-kernel",
    ]
    profiler = _front_matter(render_agent(roles.ROLES[roles.PROFILER]))
    assert "Edit" not in profiler["tools"] and profiler["skills"][0] == "profile-kernel"
    for name in SOURCE_NAMES:
        text = (REPO / AGENTS_DIR / f"{name}.md").read_text()
        assert _front_matter(text)["name"] == name
        assert roles.ROLES[name].system_prompt().rstrip() in text


def _subcommands(parser: object) -> dict[str, object]:
    import argparse

    for action in getattr(parser, "_actions", []):
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_every_kbopt_command_the_generated_files_name_exists() -> None:
    """Skills and agent files call kbopt: each command they name must be real."""
    import re

    from kbopt.agents.claude_export import expected_files
    from kbopt.cli import build_parser

    top = _subcommands(build_parser())
    seen = 0
    for rel, text in expected_files().items():
        for m in re.finditer(r"`kbopt ([a-z-]+)(?: ([a-z_-]+))?(?: ([a-z_]+))?", text):
            cmd, sub, name = m.groups()
            assert cmd in top, f"{rel}: kbopt {cmd} does not exist"
            subs = _subcommands(top[cmd])
            if subs and sub:
                assert sub in subs, f"{rel}: kbopt {cmd} {sub} does not exist"
                if sub == "tool" and name and name != "name":
                    assert name in TOOLS, f"{rel}: no tool {name}"
            seen += 1
    assert seen > 20
