"""Safe modification: back up before any change, restore byte for byte.

`Snapshot.take(root, paths, dest)` copies every file under `paths` (files or folders)
into `dest/files/` and writes `dest/manifest.json` with each file's SHA-256 — and the
folders' file lists, so that files a designer *creates* are known to be new.
`restore()` puts every backed-up file back with its exact bytes, deletes files created
since, and checks the hashes: after it, `verify()` is True or it raises.  Restoring
twice is harmless, which is what makes a crash in the middle of a rollback recoverable.

Paths inside the project root are recorded relative to it; a kernel folder outside the
project (a spec named by path) is recorded by its absolute path and backed up under
`files/abs/`.

`backup_file` / `revert_file` are the single-file calls of the optimization workflow.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kbopt.errors import KbError

# Never part of a kernel's backed-up state: caches, measured results, vendored code.
SKIP_DIRS = frozenset({"__pycache__", "results", "third_party", ".pytest_cache"})
SKIP_SUFFIXES = (".pyc", ".pyo")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files_under(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        return []
    out = []
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            if not name.endswith(SKIP_SUFFIXES):
                out.append(Path(dirpath) / name)
    return out


@dataclass
class Snapshot:
    root: Path
    dest: Path
    files: dict[str, str | None]  # relpath -> sha256, None when the file did not exist
    folders: list[str]  # relpaths of folders whose new files are removed on restore

    @classmethod
    def take(cls, root: Path, paths: Iterable[Path], dest: Path) -> Snapshot:
        root = root.resolve()
        files: dict[str, str | None] = {}
        folders: list[str] = []
        store = dest / "files"
        if dest.exists():
            shutil.rmtree(dest)
        store.mkdir(parents=True)
        for p in paths:
            p = (root / p).resolve() if not Path(p).is_absolute() else Path(p).resolve()
            rel = _rel(root, p)
            if p.is_dir():
                folders.append(rel)
            elif not p.exists():
                files[rel] = None  # a path the change may create: removed on restore
                continue
            for f in _files_under(p):
                frel = _rel(root, f)
                target = _stored(store, frel)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, target)
                files[frel] = sha256(f)
        snap = cls(root, dest, files, folders)
        (dest / "manifest.json").write_text(
            json.dumps({"root": str(root), "files": files, "folders": folders}, indent=1) + "\n"
        )
        return snap

    @classmethod
    def load(cls, dest: Path) -> Snapshot:
        try:
            data = json.loads((dest / "manifest.json").read_text())
        except (OSError, ValueError) as exc:
            raise KbError(f"no usable backup at {dest}: {exc}") from None
        return cls(Path(data["root"]), dest, dict(data["files"]), list(data["folders"]))

    def changed(self) -> list[str]:
        """Paths that differ from the backup: modified, deleted or created since."""
        out = []
        for rel, digest in self.files.items():
            p = self.root / rel
            now = sha256(p) if p.is_file() else None
            if now != digest:
                out.append(rel)
        for folder in self.folders:
            for f in _files_under(self.root / folder):
                rel = _rel(self.root, f)
                if rel not in self.files:
                    out.append(rel)
        return sorted(set(out))

    def verify(self) -> bool:
        return not self.changed()

    def rel(self, path: Path) -> str:
        """How the manifest names `path` (what `changed()` and `restore()` return)."""
        return _rel(self.root, Path(path))

    def existed(self, path: Path) -> bool:
        """Whether `path` was a file when the backup was taken."""
        return self.files.get(self.rel(path)) is not None

    def restore(self) -> list[str]:
        """Put back every backed-up byte, delete created files; returns what was changed."""
        changed = self.changed()
        for rel in changed:
            p = self.root / rel
            digest = self.files.get(rel)
            if digest is None:
                if p.is_file():
                    p.unlink()
                continue
            p.parent.mkdir(parents=True, exist_ok=True)
            tmp = p.with_name(f".{p.name}.restore")
            shutil.copy2(_stored(self.dest / "files", rel), tmp)
            os.replace(tmp, p)
        left = self.changed()
        if left:
            raise KbError(f"restore from {self.dest} left files different: {', '.join(left)}")
        return changed


def _rel(root: Path, p: Path) -> str:
    """Relative to the root when inside it, else the absolute path."""
    try:
        return p.resolve().relative_to(root).as_posix()
    except ValueError:
        return p.resolve().as_posix()


def _stored(store: Path, rel: str) -> Path:
    """Where the backup copy of `rel` lives (absolute paths under `abs/`)."""
    return store / "abs" / rel.lstrip("/") if rel.startswith("/") else store / rel


def backup_file(path: Path, backup_dir: Path, root: Path | None = None) -> Snapshot:
    """Back up one file before changing it (`backup_file(file_path)`)."""
    base = (root or path.parent).resolve()
    return Snapshot.take(base, [path], backup_dir)


def revert_file(backup_dir: Path) -> list[str]:
    """Restore the file backed up in `backup_dir` (`revert_file(file_path)`)."""
    return Snapshot.load(backup_dir).restore()
