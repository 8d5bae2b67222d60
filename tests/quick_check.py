"""Shared by the quick-path tests: a project whose index snapshot exists, and one command
answered both ways (the quick path, then the full command) with the outputs compared."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbopt.cli import main
from kbopt.cli.quick import answer
from kbopt.search import search
from kbopt.store import Store


def indexed(kb_copy: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`kb_copy` with its search index and snapshot built, quick path on by default."""
    monkeypatch.delenv("KBOPT_CACHE_DIR", raising=False)
    monkeypatch.delenv("KBOPT_QUICK", raising=False)
    search("kernel", store=Store(kb_copy))  # builds the index and its snapshot
    return kb_copy


def both(
    kb: Path,
    argv: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    """Run `argv` through the quick path and the full command; both must succeed with
    the same output and nothing on stderr.  Returns the output."""
    full_argv = ["--root", str(kb), *argv]
    capsys.readouterr()
    code = answer(full_argv)
    quick = capsys.readouterr()
    assert code == 0, f"the quick path declined {argv}"
    monkeypatch.setenv("KBOPT_QUICK", "0")
    assert main(full_argv) == 0
    full = capsys.readouterr()
    monkeypatch.delenv("KBOPT_QUICK")
    assert quick.out == full.out, argv
    assert quick.err == "" and full.err == ""
    return quick.out
