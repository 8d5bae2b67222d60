"""backup_file / revert_file for the agents' tools, on top of `kbopt.workflow.safe` (W5).

The workflow's `Snapshot` does the real work (byte-exact copies, SHA-256 manifest,
created files removed on restore, restore checked).  This adapter only gives each
project file one backup slot on disk, `<root>/.kbopt-cache/backups/<hash>/`, so that a
backup taken by one agent - or by one `kbopt agent tool backup_file` process - is
found by another, and a second backup of the same file keeps the FIRST content.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from kbopt.errors import KbError
from kbopt.workflow.safe import Snapshot, backup_file, revert_file

BACKUP_DIR = Path(".kbopt-cache") / "backups"


class Backups:
    def __init__(self, root: Path):
        self.root = root.resolve()
        self.dir = self.root / BACKUP_DIR

    def _rel(self, path: Path) -> str:
        return path.resolve().relative_to(self.root).as_posix()

    def _slot(self, path: Path) -> Path:
        return self.dir / hashlib.sha256(self._rel(path).encode()).hexdigest()[:16]

    def has_backup(self, path: Path) -> bool:
        return (self._slot(path) / "manifest.json").is_file()

    def backup(self, path: Path) -> dict[str, object]:
        """Keep the current content of `path` (or the fact that it does not exist yet)."""
        slot = self._slot(path)
        if self.has_backup(path):
            existed = Snapshot.load(slot).files.get(self._rel(path)) is not None
            return {"already_backed_up": True, "existed": existed}
        backup_file(path, slot, root=self.root)
        return {"already_backed_up": False, "existed": path.is_file()}

    def revert(self, path: Path) -> str:
        """Restore the backed-up bytes (or remove a file the change created); drop the backup."""
        slot = self._slot(path)
        if not self.has_backup(path):
            raise KbError(
                f"no backup of {self._rel(path)}: call backup_file before modifying a file"
            )
        existed = Snapshot.load(slot).files.get(self._rel(path)) is not None
        changed = revert_file(slot)
        shutil.rmtree(slot)
        if not changed:
            return "unchanged (the file already matched its backup)"
        return "restored" if existed else "removed (it did not exist before)"

    def pending(self) -> list[str]:
        """Project paths that have a backup slot (backed up, not yet reverted or kept)."""
        out: list[str] = []
        if self.dir.is_dir():
            for manifest in sorted(self.dir.glob("*/manifest.json")):
                out += list(Snapshot.load(manifest.parent).files)
        return sorted(out)

    def discard(self, path: Path) -> bool:
        """Success: keep the change and drop the backup."""
        slot = self._slot(path)
        found = slot.is_dir()
        shutil.rmtree(slot, ignore_errors=True)
        return found
