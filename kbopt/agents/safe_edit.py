"""backup_file / revert_file for the agents' tools: what a path was, put back exactly.

A backup records the state of one project path - a file, a folder (with everything in
it) or its absence - as entries of (type, mode, content checksum, link target), and
keeps a copy of each file's bytes under its SHA-256.  `revert` puts back content,
mode and type (a file replaced by a folder becomes a file again, a deleted symbolic
link comes back, a created file goes away), then checks the result against the record
and says exactly what it could not restore (the backup is then kept for another try).

Safety:
- Every stored copy is checked against its checksum *before* anything is restored: a
  copy changed since the backup (tampered with, damaged) restores nothing.
- Backups live in `<root>/.kbopt-cache/backups/<hash of the path>/`, a folder no
  agent tool may write (`kbopt.agents.tools` refuses it), one slot per project path
  so that a backup taken by one agent - or one `kbopt agent tool` process - is found
  by another, and a second backup keeps the FIRST state.
- Folders are walked without following links; a nested `.git`, a FIFO or device, a
  hard-linked file, or more than MAX_FILES / MAX_BYTES is refused, not copied.

Manifests written by earlier kbopt versions (`kbopt.workflow.safe` snapshots) are
still reverted through that module.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kbopt.errors import KbError
from kbopt.textio import file_kind

BACKUP_DIR = Path(".kbopt-cache") / "backups"
MANIFEST = "manifest.json"
FORMAT = 2
MAX_FILES = 5000
MAX_BYTES = 256 * 1024 * 1024
# Never part of a backed-up folder's state (caches that tools regenerate).
SKIP_NAMES = frozenset({"__pycache__", ".pytest_cache"})


@dataclass(frozen=True)
class Node:
    """The state of one path: type ("absent", "file", "dir", "symlink"), mode, content."""

    kind: str
    mode: int = 0
    sha256: str | None = None
    target: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.kind}
        if self.kind in ("file", "dir"):
            out["mode"] = self.mode
        if self.sha256 is not None:
            out["sha256"] = self.sha256
        if self.target is not None:
            out["target"] = self.target
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Node:
        if not isinstance(data, dict) or data.get("type") not in (
            "absent",
            "file",
            "dir",
            "symlink",
        ):
            raise ValueError(f"bad entry {data!r}")
        mode = data.get("mode", 0)
        sha = data.get("sha256")
        target = data.get("target")
        if not isinstance(mode, int) or not 0 <= mode <= 0o7777:
            raise ValueError(f"bad mode {mode!r}")
        if data["type"] == "file" and not (isinstance(sha, str) and len(sha) == 64):
            raise ValueError("a file entry without its checksum")
        if data["type"] == "symlink" and not isinstance(target, str):
            raise ValueError("a link entry without its target")
        return cls(data["type"], mode, sha, target)

    def describe(self) -> str:
        if self.kind == "symlink":
            return f"a link to {self.target}"
        if self.kind == "absent":
            return "absent"
        if self.kind == "other":
            return "something that is not a file, folder or link"
        return f"a {'folder' if self.kind == 'dir' else 'file'} (mode {self.mode:o})"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _node(path: Path, *, checksum: bool = True) -> Node:
    """The state of `path` itself (links not followed); refuses what cannot be restored."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return Node("absent")
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISLNK(info.st_mode):
        return Node("symlink", target=os.readlink(path))
    if stat.S_ISDIR(info.st_mode):
        return Node("dir", mode)
    if stat.S_ISREG(info.st_mode):
        if info.st_nlink > 1:
            raise KbError(f"{path} is a hard link (shared with another file); refused")
        return Node("file", mode, _sha256(path) if checksum else None)
    raise KbError(
        f"{path} is {file_kind(info.st_mode)}; only files, folders and links are backed up"
    )


def _scan(top: Path) -> dict[str, Node]:
    """Relative path ("" for `top` itself) -> state, for `top` and everything under it."""
    out = {"": _node(top)}
    if out[""].kind != "dir":
        return out
    total = 0
    for folder, dirnames, filenames in os.walk(top):  # links to folders are not followed
        base = Path(folder)
        for name in sorted(dirnames + filenames):
            if name in SKIP_NAMES:
                continue
            if name == ".git":
                raise KbError(f"{base / name}: a repository inside the folder; refused")
            path = base / name
            node = _node(path)
            out[path.relative_to(top).as_posix()] = node
            if node.kind == "file":
                total += path.lstat().st_size
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_NAMES)
        if len(out) > MAX_FILES or total > MAX_BYTES:
            raise KbError(
                f"{top} holds more than {MAX_FILES} files or {MAX_BYTES >> 20} MiB; back up "
                "the files you change, not the whole folder"
            )
    return out


def _remove(path: Path) -> None:
    info = path.lstat()
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path)
    else:
        path.unlink()


class Backups:
    def __init__(self, root: Path):
        self.root = root.resolve()
        self.dir = self.root / BACKUP_DIR

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def _slot(self, path: Path) -> Path:
        return self.dir / hashlib.sha256(self._rel(path).encode()).hexdigest()[:16]

    def has_backup(self, path: Path) -> bool:
        return (self._slot(path) / MANIFEST).is_file()

    # ------------------------------------------------------------------ backup

    def backup(self, path: Path) -> dict[str, object]:
        """Keep the current state of `path` (or the fact that it does not exist yet)."""
        slot = self._slot(path)
        if self.has_backup(path):
            return {"already_backed_up": True, "existed": self._load(slot)[1][""].kind != "absent"}
        nodes = _scan(path)
        blobs = slot / "blobs"
        if slot.exists():
            shutil.rmtree(slot)  # a slot left half-written by a crash
        blobs.mkdir(parents=True)
        for rel, node in nodes.items():
            if node.kind == "file" and node.sha256 is not None:
                copy = blobs / node.sha256
                if not copy.exists():
                    shutil.copyfile(path / rel if rel else path, copy)
                    if _sha256(copy) != node.sha256:
                        shutil.rmtree(slot)
                        raise KbError(
                            f"{self._rel(path)} changed while it was backed up; try again"
                        )
        manifest = {
            "format": FORMAT,
            "path": self._rel(path),
            "entries": {rel: node.as_dict() for rel, node in nodes.items()},
        }
        from kbopt.store import atomic_write

        atomic_write(slot / MANIFEST, json.dumps(manifest, indent=1) + "\n")
        files = sum(1 for n in nodes.values() if n.kind == "file")
        return {
            "already_backed_up": False,
            "existed": nodes[""].kind != "absent",
            "type": nodes[""].kind,
            "files": files,
        }

    def _load(self, slot: Path) -> tuple[str, dict[str, Node]]:
        try:
            data = json.loads((slot / MANIFEST).read_text(encoding="utf-8"))
            if data.get("format") != FORMAT:
                raise ValueError("unknown format")
            entries = {str(k): Node.from_dict(v) for k, v in data["entries"].items()}
            if "" not in entries or not isinstance(data["path"], str):
                raise ValueError("no entry for the path itself")
            for rel in entries:
                if rel.startswith("/") or ".." in rel.split("/"):
                    raise ValueError(f"entry {rel!r} leaves the backed-up path")
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise KbError(
                f"the backup at {slot} is damaged ({exc}); nothing was restored"
            ) from None
        return data["path"], entries

    # ------------------------------------------------------------------ revert

    def revert(self, path: Path) -> str:
        """Put back the backed-up state of `path`; drop the backup once it is checked."""
        slot = self._slot(path)
        if not self.has_backup(path):
            raise KbError(
                f"no backup of {self._rel(path)}: call backup_file before modifying a file"
            )
        if _is_legacy(slot):
            return self._revert_legacy(slot)
        recorded_path, want = self._load(slot)
        if recorded_path != self._rel(path):
            raise KbError(f"the backup at {slot} is of {recorded_path}, not {self._rel(path)}")
        # Every copy is checked before anything on disk changes.
        for rel, node in want.items():
            if node.kind == "file":
                copy = slot / "blobs" / str(node.sha256)
                if not copy.is_file() or _sha256(copy) != node.sha256:
                    raise KbError(
                        f"the backup copy of {self._rel(path / rel if rel else path)} does not "
                        "match its checksum (changed or damaged since the backup); nothing was "
                        "restored"
                    )
        before = self._safe_scan(path)
        if before == want:
            shutil.rmtree(slot)
            return "unchanged (it already matched its backup)"
        self._restore(path, want, before, slot)
        after = self._safe_scan(path)
        wrong = sorted(
            rel
            for rel in set(want) | set(after)
            if want.get(rel, Node("absent")) != after.get(rel, Node("absent"))
        )
        if wrong:
            lines = [
                f"{self._rel(path / r if r else path)}: is {after.get(r, Node('absent')).describe()}, "
                f"was {want.get(r, Node('absent')).describe()}"
                for r in wrong[:20]
            ]
            raise KbError(
                "revert could not restore everything (the backup is kept; fix and retry):\n"
                + "\n".join(lines)
            )
        shutil.rmtree(slot)
        top = want[""]
        if top.kind == "absent":
            return "removed (it did not exist before)"
        changed = sorted(r for r in set(want) | set(before) if want.get(r) != before.get(r))
        mode_only = all(
            r in before
            and r in want
            and (before[r].kind, before[r].sha256, before[r].target)
            == (want[r].kind, want[r].sha256, want[r].target)
            for r in changed
        )
        if mode_only:
            return "restored (mode only)"
        return "restored" if len(changed) == 1 else f"restored ({len(changed)} paths)"

    def _safe_scan(self, path: Path) -> dict[str, Node]:
        try:
            return _scan(path)
        except KbError:
            # Whatever is there now cannot be recorded (a FIFO, a nested .git...): the
            # restore replaces it wholesale.
            return {"": Node("other")}

    def _restore(self, top: Path, want: dict[str, Node], have: dict[str, Node], slot: Path) -> None:
        # 1. Remove what is not in the record (deepest first), or of another type.
        for rel in sorted(have, key=lambda r: r.count("/") if r else -1, reverse=True):
            path = top / rel if rel else top
            now, w = have[rel], want.get(rel)
            stale = (
                w is None or w.kind != now.kind or (w.kind == "symlink" and w.target != now.target)
            )
            if stale and os.path.lexists(path):
                _remove(path)
        # 2. Create folders and put files and links back, parents first.
        order = sorted(want, key=lambda r: r.count("/") if r else -1)
        for rel in order:
            node = want[rel]
            path = top / rel if rel else top
            if node.kind == "absent":
                if os.path.lexists(path):
                    _remove(path)
            elif node.kind == "dir":
                path.mkdir(parents=(rel == ""), exist_ok=True)
                os.chmod(path, 0o700)  # writable while its content is restored
            elif node.kind == "symlink":
                if not os.path.lexists(path):
                    path.parent.mkdir(parents=True, exist_ok=True)
                    os.symlink(str(node.target), path)
            elif node.kind == "file":
                cur = have.get(rel)
                if (
                    cur is not None
                    and cur.kind == "file"
                    and cur.sha256 == node.sha256
                    and os.path.lexists(path)
                ):
                    os.chmod(path, node.mode)
                    continue
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(f".{path.name}.kbopt-restore")
                shutil.copyfile(slot / "blobs" / str(node.sha256), tmp)
                os.chmod(tmp, node.mode)
                os.replace(tmp, path)
        # 3. Folder modes last, deepest first (a read-only folder is filled before it closes).
        for rel in reversed(order):
            if want[rel].kind == "dir":
                os.chmod(top / rel if rel else top, want[rel].mode)

    def _revert_legacy(self, slot: Path) -> str:
        from kbopt.workflow.safe import Snapshot, revert_file

        snap = Snapshot.load(slot)
        existed = any(v is not None for v in snap.files.values())
        changed = revert_file(slot)
        shutil.rmtree(slot)
        if not changed:
            return "unchanged (the file already matched its backup)"
        return "restored" if existed else "removed (it did not exist before)"

    # ------------------------------------------------------------------ listing

    def pending(self) -> list[str]:
        """Project paths that have a backup slot (backed up, not yet reverted or kept)."""
        out: list[str] = []
        if self.dir.is_dir():
            for manifest in sorted(self.dir.glob(f"*/{MANIFEST}")):
                try:
                    data = json.loads(manifest.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    out.append(f"{manifest.parent} (damaged backup)")
                    continue
                if isinstance(data, dict) and data.get("format") == FORMAT:
                    out.append(str(data.get("path")))
                elif isinstance(data, dict) and isinstance(data.get("files"), dict):
                    out += list(data["files"])  # an earlier kbopt's snapshot
        return sorted(out)

    def discard(self, path: Path) -> bool:
        """Success: keep the change and drop the backup."""
        slot = self._slot(path)
        found = slot.is_dir()
        shutil.rmtree(slot, ignore_errors=True)
        return found


def _is_legacy(slot: Path) -> bool:
    try:
        data = json.loads((slot / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "format" not in data and "files" in data
