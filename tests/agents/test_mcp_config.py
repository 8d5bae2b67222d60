"""`.mcp.json`: kbopt's MCP server registered by the Claude Code export and by `kbopt init`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kbopt.agents import mcp_config
from kbopt.agents.claude_export import export, stale
from kbopt.errors import KbError
from kbopt.project_init import init_project


def _servers(root: Path) -> dict:
    return json.loads((root / ".mcp.json").read_text())["mcpServers"]


def test_export_registers_the_server_and_check_notices_its_absence(tmp_path: Path) -> None:
    assert ".mcp.json" in export(tmp_path)
    assert _servers(tmp_path)["kbopt"] == {"command": "kbopt", "args": ["mcp"]}
    assert stale(tmp_path) == [] and export(tmp_path) == []
    (tmp_path / ".mcp.json").unlink()
    assert stale(tmp_path) == [".mcp.json"]


def test_other_servers_and_keys_are_kept(tmp_path: Path) -> None:
    mine = {"command": "my-server", "args": ["--fast"], "env": {"A": "1"}}
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"mine": mine, "kbopt": {"command": "old"}}, "x": 1})
    )
    assert mcp_config.register(tmp_path) is True
    data = json.loads((tmp_path / ".mcp.json").read_text())
    assert data["x"] == 1 and data["mcpServers"]["mine"] == mine
    assert data["mcpServers"]["kbopt"] == mcp_config.server_entry()
    assert mcp_config.register(tmp_path) is False  # already registered: untouched


@pytest.mark.parametrize(
    ("text", "fragment"),
    [("{not json", ".mcp.json:1: not valid JSON"), ("[1]", "expected an object")],
)
def test_a_broken_file_is_a_clear_error_and_left_alone(
    tmp_path: Path, text: str, fragment: str
) -> None:
    (tmp_path / ".mcp.json").write_text(text)
    with pytest.raises(KbError, match=fragment):
        mcp_config.register(tmp_path)
    assert (tmp_path / ".mcp.json").read_text() == text
    assert ".mcp.json" in stale(tmp_path)


def test_init_registers_the_server_in_a_users_repository(tmp_path: Path) -> None:
    report = init_project(tmp_path)
    assert ".mcp.json" in report.created
    assert "kbopt" in _servers(tmp_path)
    again = init_project(tmp_path)
    assert ".mcp.json" in again.kept


def test_init_merges_into_an_existing_file(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"mine": {"command": "m"}}}))
    report = init_project(tmp_path)
    assert ".mcp.json" in report.updated
    assert set(_servers(tmp_path)) == {"mine", "kbopt"}


def test_the_repository_registers_it() -> None:
    repo = Path(__file__).resolve().parents[2]
    assert mcp_config.is_current(repo), "run `kbopt agent export-claude`"
