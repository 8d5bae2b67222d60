"""Revert trials: random changes to a backed-up file or folder, then revert; the tree
must come back exactly (content, mode, type, link targets, absence) every time.

Seeded, so a failure names its trial; ~150 trials run in a few seconds.
"""

from __future__ import annotations

import os
import random
import shutil
import stat
from pathlib import Path

import pytest

from kbopt.agents.safe_edit import Backups


def _state(top: Path) -> dict[str, tuple[str, int, bytes | str | None]]:
    """Everything about `top` and below that revert must restore."""
    out: dict[str, tuple[str, int, bytes | str | None]] = {}

    def visit(path: Path, rel: str) -> None:
        if not os.path.lexists(path):
            out[rel] = ("absent", 0, None)
            return
        info = path.lstat()
        mode = stat.S_IMODE(info.st_mode)
        if stat.S_ISLNK(info.st_mode):
            out[rel] = ("link", 0, os.readlink(path))
        elif stat.S_ISDIR(info.st_mode):
            out[rel] = ("dir", mode, None)
            for child in sorted(os.listdir(path)):
                visit(path / child, f"{rel}/{child}")
        else:
            out[rel] = ("file", mode, path.read_bytes())

    visit(top, ".")
    return out


def _change(rng: random.Random, top: Path) -> str:
    """One random change to `top` or somewhere under it."""
    paths = [top, *top.rglob("*")] if top.is_dir() and not top.is_symlink() else [top]
    target = rng.choice(paths)
    op = rng.choice(["write", "chmod", "delete", "to_dir", "to_link", "new_file", "crlf", "empty"])
    if op == "write" and target.is_file() and not target.is_symlink():
        target.write_bytes(target.read_bytes() + b"changed\n")
    elif op == "chmod" and os.path.lexists(target) and not target.is_symlink():
        target.chmod(rng.choice([0o600, 0o644, 0o755, 0o700, 0o444]) if target.is_file() else 0o755)
    elif op == "delete" and os.path.lexists(target):
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink()
    elif (
        op == "to_dir"
        and os.path.lexists(target)
        and not (target.is_dir() and not target.is_symlink())
    ):
        target.unlink()
        target.mkdir()
        (target / "planted.py").write_text("planted\n")
    elif op == "to_link" and os.path.lexists(target):
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink()
        target.symlink_to(rng.choice(["elsewhere.py", "../x", "/etc/hostname"]))
    elif op == "new_file" and not os.path.lexists(top):
        top.write_text("created\n")
    elif op == "new_file" and target.is_dir() and not target.is_symlink():
        (target / f"new{rng.randrange(100)}.py").write_text("new\n")
    elif op == "crlf" and target.is_file() and not target.is_symlink():
        target.write_bytes(target.read_bytes().replace(b"\n", b"\r\n"))
    elif op == "empty" and target.is_file() and not target.is_symlink():
        target.write_bytes(b"")
    return op


def _setup(root: Path, shape: str) -> Path:
    k = root / "kernels" / "k"
    k.mkdir(parents=True)
    (k / "v1.py").write_text("BLOCK = 64\r\nx = 1\n")
    (k / "run.sh").write_text("#!/bin/sh\n")
    (k / "run.sh").chmod(0o755)
    (k / "latest.py").symlink_to("v1.py")
    (k / "sub").mkdir()
    (k / "sub" / "a.py").write_text("a\n")
    return {
        "file": k / "v1.py",
        "script": k / "run.sh",
        "link": k / "latest.py",
        "folder": k,
        "absent": k / "v2.py",
    }[shape]


TRIALS = [
    (shape, seed) for shape in ("file", "script", "link", "folder", "absent") for seed in range(30)
]


@pytest.mark.parametrize(("shape", "seed"), TRIALS)
def test_revert_restores_everything(tmp_path: Path, shape: str, seed: int) -> None:
    root = tmp_path / "p"
    target = _setup(root, shape)
    before = _state(target)
    around = {p.name for p in target.parent.iterdir()} - {target.name}
    backups = Backups(root)
    backups.backup(target)
    rng = random.Random(seed)
    ops = [_change(rng, target) for _ in range(rng.randint(1, 4))]
    backups.revert(target)
    assert _state(target) == before, ops
    # Nothing beside the backed-up path was touched by the revert (new files the
    # changes made there are not part of the backup and stay).
    assert around <= {p.name for p in target.parent.iterdir()}
    assert not backups.pending()
