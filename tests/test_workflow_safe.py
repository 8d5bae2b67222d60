"""Backup and byte-identical restore (W5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbopt.errors import KbError
from kbopt.workflow.safe import Snapshot, backup_file, revert_file


def test_restore_puts_back_modified_deleted_and_removes_created(tmp_path: Path) -> None:
    k = tmp_path / "kernels" / "k"
    k.mkdir(parents=True)
    (k / "a.py").write_bytes(b"A = 1\r\n\x00binary-safe\n")
    (k / "b.py").write_text("B = 2\n")
    (k / "__pycache__").mkdir()
    (k / "__pycache__" / "a.cpython.pyc").write_bytes(b"cache")
    doc = tmp_path / "docs" / "k.md"
    doc.parent.mkdir()
    doc.write_text("# k\n")
    snap = Snapshot.take(tmp_path, [k, doc, tmp_path / "new.md"], tmp_path / "backup")
    (k / "a.py").write_bytes(b"A = 2\n")
    (k / "b.py").unlink()
    (k / "c.py").write_text("C = 3\n")
    (tmp_path / "new.md").write_text("created\n")
    doc.write_text("# k\nedited\n")
    (k / "__pycache__" / "a.cpython.pyc").write_bytes(b"other cache")  # not tracked
    assert set(snap.changed()) == {
        "kernels/k/a.py",
        "kernels/k/b.py",
        "kernels/k/c.py",
        "new.md",
        "docs/k.md",
    }
    restored = Snapshot.load(tmp_path / "backup").restore()
    assert len(restored) == 5
    assert (k / "a.py").read_bytes() == b"A = 1\r\n\x00binary-safe\n"
    assert (k / "b.py").read_text() == "B = 2\n"
    assert not (k / "c.py").exists() and not (tmp_path / "new.md").exists()
    assert doc.read_text() == "# k\n"
    assert snap.verify()
    assert snap.restore() == []  # idempotent: a resumed rollback is harmless


def test_single_file_calls(tmp_path: Path) -> None:
    f = tmp_path / "train.py"
    f.write_text("x = 1\n")
    backup_file(f, tmp_path / ".bk")
    f.write_text("x = 2\n")
    assert revert_file(tmp_path / ".bk") == ["train.py"]
    assert f.read_text() == "x = 1\n"
    with pytest.raises(KbError, match="no usable backup"):
        revert_file(tmp_path / "missing")
