"""`.mcp.json`: Claude Code's project-scope list of MCP servers, with kbopt's in it.

`kbopt agent export-claude` and `kbopt init` register `kbopt mcp` there, so Claude Code
offers the catalog's tools (search, show, list, recommend, vocab and the update
protocol) from one warm server instead of a `kbopt` process per question.  The file
may list other servers too: only the `kbopt` entry is kbopt's, so registering merges
it in and leaves every other server (and key) as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kbopt.errors import KbError

MCP_JSON = Path(".mcp.json")
SERVER_KEY = "kbopt"


def server_entry() -> dict[str, Any]:
    """How Claude Code starts the server: `kbopt` on PATH, in the project root."""
    return {"command": "kbopt", "args": ["mcp"]}


def _load(path: Path) -> dict[str, Any] | None:
    """The file as a JSON object, None when absent; a clear error when it is not one."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise KbError(f"{path}: cannot read it ({exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise KbError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); fix or remove it"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise KbError(f"{path}:1: expected an object with an 'mcpServers' object")
    return data


def render(existing: dict[str, Any] | None) -> str:
    """The file with kbopt's server registered (other servers kept, in their order)."""
    data = dict(existing or {})
    servers = dict(data.get("mcpServers", {}))
    servers[SERVER_KEY] = server_entry()
    data["mcpServers"] = servers
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def is_current(root: Path) -> bool:
    """Whether `root/.mcp.json` registers kbopt's server as `register` would."""
    try:
        data = _load(root / MCP_JSON)
    except KbError:
        return False
    return data is not None and data.get("mcpServers", {}).get(SERVER_KEY) == server_entry()


def register(root: Path) -> bool:
    """Add (or correct) kbopt's server in `root/.mcp.json`; True when the file changed."""
    from kbopt.store import atomic_write

    path = root / MCP_JSON
    existing = _load(path)
    text = render(existing)
    if existing is not None and path.read_text(encoding="utf-8") == text:
        return False
    if existing is not None and existing.get("mcpServers", {}).get(SERVER_KEY) == server_entry():
        return False  # registered already; the rest of the file is the user's layout
    atomic_write(path, text)
    return True
