"""The routing rules and the backup rule in Claude Code: PreToolUse hooks.

The Claude Code orchestrator has no shell, so it cannot run `kbopt agent route` itself.
Instead `.claude/settings.json` gets a hook that Claude Code runs before every Task
call: `kbopt agent check-task` reads the call (JSON on stdin), and a delegation to a
kbopt specialist that the routing rules forbid is blocked (exit 2) with the rule,
which Claude Code shows to the orchestrator.  Task calls to agents that are not kbopt
roles (Claude Code's own Explore, Plan...) pass untouched.

A second hook runs before Claude Code's file-editing tools (Edit, Write, MultiEdit,
NotebookEdit): `kbopt agent check-edit` blocks a change to an existing project file that
has no backup, the rule the Python agents' edit_file and write_file enforce, so that
revert_file can put it back byte for byte after a regression (the specialist runs
`kbopt agent tool backup_file` first; new files need none).

`register(root)` merges the hooks into the project's settings (other settings and
hooks kept); `is_current(root)` is what `kbopt agent export-claude --check` asks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kbopt.errors import KbError

SETTINGS = Path(".claude") / "settings.json"
HOOK_COMMAND = "kbopt agent check-task"
MATCHER = "Task"
EDIT_HOOK_COMMAND = "kbopt agent check-edit"
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
EDIT_MATCHER = "|".join(EDIT_TOOLS)


def _hook_entries() -> list[dict[str, Any]]:
    return [
        {"matcher": MATCHER, "hooks": [{"type": "command", "command": HOOK_COMMAND}]},
        {"matcher": EDIT_MATCHER, "hooks": [{"type": "command", "command": EDIT_HOOK_COMMAND}]},
    ]


def _load(root: Path) -> dict[str, Any]:
    path = root / SETTINGS
    if not path.exists():
        return {}
    from kbopt.textio import read_text

    try:
        data = json.loads(read_text(path, shown=str(SETTINGS)))
    except json.JSONDecodeError as exc:
        raise KbError(f"not JSON: {exc.msg}", str(SETTINGS), exc.lineno) from None
    if not isinstance(data, dict):
        raise KbError("Claude Code settings must be a JSON object", str(SETTINGS), 1)
    return data


def _has_hook(data: dict[str, Any]) -> bool:
    hooks = data.get("hooks")
    entries = hooks.get("PreToolUse") if isinstance(hooks, dict) else None
    return isinstance(entries, list) and all(e in entries for e in _hook_entries())


def is_current(root: Path) -> bool:
    try:
        return _has_hook(_load(root))
    except KbError:
        return False


def register(root: Path) -> bool:
    """Add the hook to `.claude/settings.json` (created if missing); True if it changed."""
    data = _load(root)
    if _has_hook(data):
        return False
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise KbError("`hooks` must be a JSON object", str(SETTINGS), 1)
    entries = hooks.setdefault("PreToolUse", [])
    if not isinstance(entries, list):
        raise KbError("`hooks.PreToolUse` must be a JSON list", str(SETTINGS), 1)
    entries += [e for e in _hook_entries() if e not in entries]
    from kbopt.store import atomic_write

    atomic_write(root / SETTINGS, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return True


def check_task(payload: Any) -> str | None:
    """Why a Task call must be blocked (the routing rule it breaks), or None to allow it."""
    from kbopt.agents.roles import DELEGATES
    from kbopt.agents.routing import DelegationRefused, check_delegation

    if not isinstance(payload, dict) or payload.get("tool_name") != MATCHER:
        return None
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    target = tool_input.get("subagent_type")
    task = tool_input.get("prompt")
    if not isinstance(target, str) or target not in DELEGATES:
        return None  # not a kbopt role: Claude Code's own agents are not routed
    if not isinstance(task, str) or not task.strip():
        return f"a Task for {target} needs its task in the prompt"
    try:
        check_delegation(target, task)
    except DelegationRefused as exc:
        return str(exc)
    except KbError as exc:
        return str(exc)
    return None


def check_edit(payload: Any, root: Path) -> str | None:
    """Why an edit of an existing project file must be blocked (it has no backup), or None.
    Paths outside the project, new files and calls of other tools pass."""
    from kbopt.agents.safe_edit import BACKUP_DIR, Backups

    if not isinstance(payload, dict) or payload.get("tool_name") not in EDIT_TOOLS:
        return None
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    raw = tool_input.get("file_path") or tool_input.get("notebook_path")
    if not isinstance(raw, str) or not raw.strip():
        return None
    root = root.resolve()
    path = Path(raw)
    full = (path if path.is_absolute() else root / path).resolve()
    try:
        rel = full.relative_to(root).as_posix()
    except ValueError:
        return None  # outside the project: not kbopt's to guard
    if full.is_relative_to(root / BACKUP_DIR):
        return f"{rel} is in kbopt's backups, which no agent writes"
    if not full.exists() or Backups(root).has_backup(full):
        return None
    return (
        f"{rel} has no backup: run `kbopt agent tool backup_file --role <your role> --input "
        f'\'{{"path": "{rel}"}}\'` before changing it, so that a regression can be reverted'
    )
