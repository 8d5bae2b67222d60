"""Writes keep modes and bytes; revert restores content, mode, type and absence; the
orchestrator's rule (no file changes outside backup/revert, never the repository's own
machinery or the knowledge base) holds against the attacks that once got through."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from kbopt.agents import roles
from kbopt.agents.remote import LocalExecutor
from kbopt.agents.tools import MAX_WRITE_BYTES, ToolContext, call_tool
from kbopt.store import Store, atomic_write
from tests.core.sample import VALID


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "docs" / "knowledge" / "optimizations").mkdir(parents=True)
    (root / "docs" / "knowledge" / "optimizations" / "sample-opt.md").write_text(VALID)
    (root / "kernels" / "k").mkdir(parents=True)
    (root / "kernels" / "k" / "v1.py").write_text("BLOCK = 64\n")
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


def ctx(root: Path, role: str = roles.TRITON) -> ToolContext:
    return ToolContext(root=root, store=Store(root), executor=LocalExecutor(root), role=role)


def ok(c: ToolContext, name: str, inp: dict) -> dict:
    out = call_tool(c, name, inp)
    assert not out.is_error, out.content
    return json.loads(out.content)


def err(c: ToolContext, name: str, inp: dict) -> str:
    out = call_tool(c, name, inp)
    assert out.is_error, out.content
    return out.content


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


# --------------------------------------------------------------------------- modes and bytes


@pytest.mark.parametrize(("umask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_files_get_the_usual_mode(tmp_path: Path, umask: int, expected: int) -> None:
    old = os.umask(umask)
    try:
        atomic_write(tmp_path / "new.txt", "x\n")
        store = Store(tmp_path / "kb")
        (tmp_path / "kb" / "docs" / "knowledge").mkdir(parents=True)
        from kbopt.template import parse_entry

        path = store.write(parse_entry(VALID, name="sample-opt"))
    finally:
        os.umask(old)
    assert mode(tmp_path / "new.txt") == expected
    assert mode(path) == expected


def test_replaced_files_keep_their_mode(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o750)
    atomic_write(script, "#!/bin/sh\necho hi\n")
    assert mode(script) == 0o750
    assert script.read_bytes() == b"#!/bin/sh\necho hi\n"


def test_edit_file_keeps_exec_bit_crlf_and_bom(proj: Path) -> None:
    c = ctx(proj)
    path = proj / "kernels" / "k" / "run.py"
    path.write_bytes(b"\xef\xbb\xbf#!/usr/bin/env python\r\nBLOCK = 64\r\nprint(BLOCK)\r\n")
    path.chmod(0o755)
    ok(c, "backup_file", {"path": "kernels/k/run.py"})
    ok(
        c,
        "edit_file",
        {"path": "kernels/k/run.py", "old": "BLOCK = 64\nprint", "new": "BLOCK = 128\nprint"},
    )
    assert (
        path.read_bytes() == b"\xef\xbb\xbf#!/usr/bin/env python\r\nBLOCK = 128\r\nprint(BLOCK)\r\n"
    )
    assert mode(path) == 0o755


def test_write_size_is_bounded(proj: Path) -> None:
    c = ctx(proj)
    big = "x" * (MAX_WRITE_BYTES + 1)
    assert "limit" in err(c, "write_file", {"path": "kernels/k/big.py", "content": big})
    assert not (proj / "kernels" / "k" / "big.py").exists()
    ok(c, "backup_file", {"path": "kernels/k/v1.py"})
    assert "limit" in err(c, "edit_file", {"path": "kernels/k/v1.py", "old": "64", "new": big})
    assert (proj / "kernels" / "k" / "v1.py").read_text() == "BLOCK = 64\n"


def test_hard_links_are_refused(proj: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("token\n")
    os.link(secret, proj / "kernels" / "k" / "linked.py")
    c = ctx(proj)
    for name, extra in (
        ("read_file", {}),
        ("write_file", {"content": "x"}),
        ("edit_file", {"old": "token", "new": "x"}),
        ("backup_file", {}),
    ):
        assert "hard link" in err(c, name, {"path": "kernels/k/linked.py", **extra}), name
    assert secret.read_text() == "token\n"


# --------------------------------------------------------------------------- revert


def test_revert_restores_a_permission_only_change(proj: Path) -> None:
    c, path = ctx(proj), proj / "kernels" / "k" / "v1.py"
    path.chmod(0o640)
    ok(c, "backup_file", {"path": "kernels/k/v1.py"})
    path.chmod(0o777)
    assert ok(c, "revert_file", {"path": "kernels/k/v1.py"})["action"] == "restored (mode only)"
    assert mode(path) == 0o640


def test_revert_turns_a_folder_back_into_the_file(proj: Path) -> None:
    c, path = ctx(proj), proj / "kernels" / "k" / "v1.py"
    ok(c, "backup_file", {"path": "kernels/k/v1.py"})
    path.unlink()
    path.mkdir()
    (path / "inner.py").write_text("planted\n")
    ok(c, "revert_file", {"path": "kernels/k/v1.py"})
    assert path.is_file() and path.read_text() == "BLOCK = 64\n"


def test_revert_brings_back_a_deleted_link(proj: Path) -> None:
    c, link = ctx(proj), proj / "kernels" / "k" / "latest.py"
    link.symlink_to("v1.py")
    ok(c, "backup_file", {"path": "kernels/k/latest.py"})
    link.unlink()
    ok(c, "revert_file", {"path": "kernels/k/latest.py"})
    assert link.is_symlink() and os.readlink(link) == "v1.py"
    assert (proj / "kernels" / "k" / "v1.py").read_text() == "BLOCK = 64\n"  # target untouched


def test_revert_of_a_link_replaced_by_a_file(proj: Path) -> None:
    c, link = ctx(proj), proj / "kernels" / "k" / "latest.py"
    link.symlink_to("v1.py")
    ok(c, "backup_file", {"path": "kernels/k/latest.py"})
    link.unlink()
    link.write_text("not a link\n")
    ok(c, "revert_file", {"path": "kernels/k/latest.py"})
    assert link.is_symlink() and os.readlink(link) == "v1.py"


def test_revert_of_a_folder_restores_content_modes_and_absence(proj: Path) -> None:
    c, folder = ctx(proj), proj / "kernels" / "k"
    (folder / "sub").mkdir()
    (folder / "sub" / "a.py").write_text("a\n")
    (folder / "tool.sh").write_text("#!/bin/sh\n")
    (folder / "tool.sh").chmod(0o755)
    ok(c, "backup_file", {"path": "kernels/k"})
    (folder / "v1.py").write_text("changed\n")
    (folder / "sub" / "a.py").unlink()
    (folder / "new.py").write_text("created\n")
    (folder / "tool.sh").chmod(0o644)
    (folder / "sub").chmod(0o700)
    ok(c, "revert_file", {"path": "kernels/k"})
    assert (folder / "v1.py").read_text() == "BLOCK = 64\n"
    assert (folder / "sub" / "a.py").read_text() == "a\n"
    assert not (folder / "new.py").exists()
    assert mode(folder / "tool.sh") == 0o755
    assert mode(folder / "sub") == 0o755


def test_revert_of_a_created_path_removes_it_whatever_it_became(proj: Path) -> None:
    c = ctx(proj)
    ok(c, "backup_file", {"path": "kernels/k/v2"})
    (proj / "kernels" / "k" / "v2").mkdir()
    (proj / "kernels" / "k" / "v2" / "x.py").write_text("x\n")
    assert "removed" in ok(c, "revert_file", {"path": "kernels/k/v2"})["action"]
    assert not (proj / "kernels" / "k" / "v2").exists()


def test_a_tampered_backup_restores_nothing(proj: Path) -> None:
    c, path = ctx(proj), proj / "kernels" / "k" / "v1.py"
    ok(c, "backup_file", {"path": "kernels/k/v1.py"})
    path.write_text("BLOCK = 128\n")
    blobs = list((proj / ".kbopt-cache" / "backups").glob("*/blobs/*"))
    assert len(blobs) == 1
    blobs[0].write_text("planted\n")
    assert "checksum" in err(c, "revert_file", {"path": "kernels/k/v1.py"})
    assert path.read_text() == "BLOCK = 128\n"  # nothing restored from a bad copy


def test_a_damaged_manifest_restores_nothing(proj: Path) -> None:
    c, path = ctx(proj), proj / "kernels" / "k" / "v1.py"
    ok(c, "backup_file", {"path": "kernels/k/v1.py"})
    path.write_text("BLOCK = 128\n")
    manifest = next((proj / ".kbopt-cache" / "backups").glob("*/manifest.json"))
    data = json.loads(manifest.read_text())
    data["entries"]["../../outside"] = {"type": "absent"}
    manifest.write_text(json.dumps(data))
    assert "damaged" in err(c, "revert_file", {"path": "kernels/k/v1.py"})
    assert path.read_text() == "BLOCK = 128\n"


def test_tools_cannot_reach_the_backups(proj: Path) -> None:
    c = ctx(proj)
    ok(c, "backup_file", {"path": "kernels/k/v1.py"})
    slot = next((proj / ".kbopt-cache" / "backups").iterdir()).relative_to(proj)
    for name, extra in (
        ("write_file", {"content": "x"}),
        ("backup_file", {}),
        ("revert_file", {}),
    ):
        assert "not writable" in err(c, name, {"path": f"{slot}/manifest.json", **extra})


def test_a_folder_holding_a_repository_is_not_backed_up(proj: Path) -> None:
    (proj / "kernels" / "vendored" / ".git").mkdir(parents=True)
    assert "repository inside" in err(ctx(proj), "backup_file", {"path": "kernels/vendored"})


# --------------------------------------------------------------------------- the orchestrator's rule

REFUSED_PATHS = [
    ".",
    "",
    "./",
    ".git",
    ".git/HEAD",
    ".git/hooks/pre-commit",
    "kernels/sub/.git/hooks/pre-commit",
    ".github/workflows/ci.yml",
    ".gitmodules",
    ".gitlab-ci.yml",
    ".ci/run",
    ".mcp.json",
    ".kbopt-cache/backups/x",
    "catalog/catalog.json",
    ".claude/agents/orchestrator.md",
    "docs",
    "docs/",
    "docs/knowledge",
    "docs/knowledge/optimizations/sample-opt.md",
    "kernels/../docs",
]


@pytest.mark.parametrize("path", REFUSED_PATHS)
@pytest.mark.parametrize("tool", ["backup_file", "revert_file", "discard_backup"])
def test_orchestrator_cannot_back_up_or_revert_protected_paths(
    proj: Path, path: str, tool: str
) -> None:
    c = ctx(proj, roles.ORCHESTRATOR)
    out = call_tool(c, tool, {"path": path} if path else {"path": "."})
    assert out.is_error and ("not writable" in out.content or "knowledge base" in out.content), (
        out.content
    )


@pytest.mark.parametrize("path", [p for p in REFUSED_PATHS if p not in ("", "./")])
def test_designer_cannot_write_protected_paths(proj: Path, path: str) -> None:
    out = call_tool(ctx(proj, roles.KERNEL_DESIGNER), "write_file", {"path": path, "content": "x"})
    assert out.is_error and ("not writable" in out.content or "knowledge base" in out.content), (
        out.content
    )


def test_the_commit_erasing_attack_is_refused(proj: Path) -> None:
    """backup_file(".") then revert_file(".") once reset the repository."""
    c = ctx(proj, roles.ORCHESTRATOR)
    assert "root" in err(c, "backup_file", {"path": "."})
    (proj / ".git" / "HEAD").write_text("ref: refs/heads/other\n")
    assert "root" in err(c, "revert_file", {"path": "."})
    assert (proj / ".git" / "HEAD").read_text() == "ref: refs/heads/other\n"


def test_a_link_to_a_protected_place_is_not_a_way_in(proj: Path) -> None:
    (proj / "kernels" / "k" / "hooks").symlink_to(proj / ".git" / "hooks")
    c = ctx(proj, roles.KERNEL_DESIGNER)
    assert "not writable" in err(
        c, "write_file", {"path": "kernels/k/hooks/pre-commit", "content": "x"}
    )
    assert not (proj / ".git" / "hooks" / "pre-commit").exists()


def test_orchestrator_has_no_file_writing_tool(proj: Path) -> None:
    c = ctx(proj, roles.ORCHESTRATOR)
    for tool in ("write_file", "edit_file", "run_tests", "read_file"):
        assert "not available to orchestrator" in err(c, tool, {"path": "kernels/k/v1.py"})


def test_claude_code_orchestrator_has_no_shell_no_writes_no_skill() -> None:
    import yaml

    from kbopt.agents.claude_export import render_agent
    from kbopt.agents.roles import ROLES

    text = render_agent(ROLES[roles.ORCHESTRATOR])
    fm = yaml.safe_load(text.split("---\n")[1])
    tools = {t.strip() for t in fm["tools"].split(",")}
    assert "Task" in tools and not tools & {"Bash", "Edit", "Write", "NotebookEdit"}
    assert {"Bash", "Edit", "Write"} <= {t.strip() for t in fm["disallowedTools"].split(",")}
    assert "skills" not in fm
    # Specialists keep their shell and skills.
    fm = yaml.safe_load(render_agent(ROLES[roles.TRITON]).split("---\n")[1])
    assert "Bash" in fm["tools"] and fm["skills"]


def test_claude_code_routing_hook_blocks_a_wrong_task(tmp_path: Path) -> None:
    """The orchestrator has no shell: a hook checks every Task call against the rules."""
    import subprocess
    import sys

    from kbopt.agents import claude_hooks

    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        '{"permissions": {"allow": ["Read"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": []}]}}'
    )
    assert not claude_hooks.is_current(tmp_path)
    assert claude_hooks.register(tmp_path) and not claude_hooks.register(tmp_path)
    data = json.loads(settings.read_text())
    assert data["permissions"] == {"allow": ["Read"]} and len(data["hooks"]["PreToolUse"]) == 3
    assert claude_hooks.is_current(tmp_path)

    def hook(subagent: str, prompt: str) -> subprocess.CompletedProcess[str]:
        payload = {"tool_name": "Task", "tool_input": {"subagent_type": subagent, "prompt": prompt}}
        return subprocess.run(
            [sys.executable, "-m", "kbopt", "agent", "check-task"],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=60,
        )

    r = hook(roles.TRITON, "Générez un kernel CuTe DSL pour l'opération GEMM")
    assert r.returncode == 2 and "rule cute-domain" in r.stderr
    r = hook(roles.TILEIR, "Convert the CuTe kernel to TileIR")
    assert r.returncode == 2 and "tileir-no-scratch" in r.stderr
    assert hook(roles.CUTE, "Générez un kernel CuTe DSL pour l'opération GEMM").returncode == 0
    assert hook("Explore", "look around").returncode == 0  # Claude Code's own agents pass
    r = subprocess.run(
        [sys.executable, "-m", "kbopt", "agent", "check-task"],
        input="not json",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_claude_code_edit_hook_blocks_a_change_without_a_backup(tmp_path: Path) -> None:
    """Specialists edit with Claude Code's own tools: a hook holds them to the rule the
    Python tools enforce (an existing file is changed only after backup_file)."""
    import subprocess
    import sys

    from kbopt.agents.claude_hooks import check_edit
    from kbopt.agents.safe_edit import Backups

    (tmp_path / "docs" / "knowledge").mkdir(parents=True)  # a project root
    kernel = tmp_path / "kernels" / "toy" / "triton_v1.py"
    kernel.parent.mkdir(parents=True)
    kernel.write_text("x = 1\n")

    def call(tool: str, path: str) -> dict:
        return {"tool_name": tool, "tool_input": {"file_path": path}, "cwd": str(tmp_path)}

    why = check_edit(call("Edit", str(kernel)), tmp_path)
    assert (
        why is not None and "kernels/toy/triton_v1.py has no backup" in why and "backup_file" in why
    )
    assert check_edit(call("Write", "kernels/toy/triton_v2.py"), tmp_path) is None  # a new file
    assert check_edit(call("Edit", "/etc/hosts"), tmp_path) is None  # not the project's
    assert check_edit(call("Read", str(kernel)), tmp_path) is None  # not an edit
    assert "backups" in (
        check_edit(call("Write", ".kbopt-cache/backups/x/manifest.json"), tmp_path) or ""
    )
    Backups(tmp_path).backup(kernel)
    assert check_edit(call("MultiEdit", str(kernel)), tmp_path) is None

    other = tmp_path / "kernels" / "toy" / "spec.py"
    other.write_text("y = 2\n")
    r = subprocess.run(
        [sys.executable, "-m", "kbopt", "agent", "check-edit"],
        input=json.dumps(call("Edit", str(other))),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "kernels/toy/spec.py has no backup" in r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "kbopt", "agent", "check-edit"],
        input="not json",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
