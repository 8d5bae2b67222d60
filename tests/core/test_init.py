"""`kbopt init`: a user's repository set up once, and safely again."""

from __future__ import annotations

import json
import pathlib
from pathlib import Path

import pytest

from kbopt.agents.claude_export import expected_files as claude_files
from kbopt.cli import main
from kbopt.project_init import init_project, layout_folders
from kbopt.store import KNOWLEDGE_DIR, Store, classify_path, find_project_root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_init_sets_up_an_empty_folder(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    report = init_project(root)
    assert report.kept == [] and report.updated == []
    knowledge = root / KNOWLEDGE_DIR
    assert (knowledge / "README.md").is_file()
    for folder in layout_folders():
        assert (knowledge / folder).is_dir()
        assert not isinstance(classify_path(folder / "x.md"), str), folder  # the store's layout
        assert f"{(KNOWLEDGE_DIR / folder).as_posix()}/" in report.created
    assert "kbopt kernel new NAME --dims a,b" in (root / "kernels" / "README.md").read_text()
    for rel, text in claude_files().items():
        assert (root / rel).read_text() == text
    assert ".kbopt-cache/" in (root / ".gitignore").read_text().splitlines()
    assert find_project_root(root / "kernels") == root
    store = Store(root)
    assert store.entry_files() == []  # KBOPT_BUNDLED=0 in the tests: the project alone
    assert json.loads((root / "catalog" / "catalog.json").read_text())["entries"] == []


def test_init_again_keeps_every_file(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".gitignore").write_text("node_modules")
    init_project(root)
    assert (root / ".gitignore").read_text() == "node_modules\n.kbopt-cache/\n"
    agent = root / ".claude" / "agents" / "orchestrator.md"
    agent.write_text("my own orchestrator\n")
    (root / KNOWLEDGE_DIR / "README.md").write_text("ours\n")
    before = _snapshot(root)

    report = init_project(root)
    assert report.created == [] and report.updated == []
    assert ".claude/agents/orchestrator.md" in report.kept and ".gitignore" in report.kept
    assert _snapshot(root) == before


def test_cli_init_json_and_clean_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "repo"
    assert main(["init", str(root), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["root"] == str(root) and "kernels/README.md" in report["created"]
    assert main(["init", str(root)]) == 0
    out = capsys.readouterr().out
    assert "kept:" in out and "created:" not in out

    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    assert main(["init", str(a_file)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kbopt: error: ") and "is a file" in err and err.count("\n") == 1

    typo = tmp_path / "no-such-parent" / "deep" / "repo"
    assert main(["init", str(typo), "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error == [
        f"{typo.parent} does not exist: kbopt init creates the repository's folder, not the "
        f"folders above it (create them first: mkdir -p {typo.parent})"
    ]
    assert not (tmp_path / "no-such-parent").exists()  # a typo creates nothing

    locked = tmp_path / "locked"
    real_mkdir = pathlib.Path.mkdir

    def refuse(self: Path, *args: object, **kwargs: object) -> None:
        if self.is_relative_to(locked):
            raise PermissionError(13, "Permission denied", str(self))
        real_mkdir(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pathlib.Path, "mkdir", refuse)
    assert main(["init", str(locked)]) == 2
    err = capsys.readouterr().err
    assert err == f"kbopt: error: cannot write {locked}: Permission denied\n"
