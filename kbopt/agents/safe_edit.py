"""Safe modification for the agents' tools: backup_file / revert_file (W5).

Backups live on disk under `<root>/.kbopt-cache/backups/` (ignored by git) so that a
backup taken by one agent - or by one `kbopt agent tool backup_file` process - can be
restored by another.  A file that did not exist when it was backed up is recorded as
absent: reverting it deletes the file the change created.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from kbopt.errors import KbError

BACKUP_DIR = Path(".kbopt-cache") / "backups"


class Backups:
    def __init__(self, root: Path):
        self.root = root.resolve()
        self.dir = self.root / BACKUP_DIR

    def _slot(self, path: Path) -> tuple[Path, Path]:
        rel = path.resolve().relative_to(self.root)
        key = hashlib.sha256(str(rel).encode()).hexdigest()[:16]
        return self.dir / f"{key}.orig", self.dir / f"{key}.json"

    def has_backup(self, path: Path) -> bool:
        return self._slot(path)[1].is_file()

    def backup(self, path: Path) -> dict[str, object]:
        """Keep the current content of `path`; a second backup keeps the FIRST one."""
        copy, meta = self._slot(path)
        rel = str(path.resolve().relative_to(self.root))
        if meta.is_file():
            return {"already_backed_up": True, "existed": json.loads(meta.read_text())["existed"]}
        self.dir.mkdir(parents=True, exist_ok=True)
        existed = path.is_file()
        if existed:
            shutil.copy2(path, copy)
        meta.write_text(json.dumps({"path": rel, "existed": existed}), encoding="utf-8")
        return {"already_backed_up": False, "existed": existed}

    def revert(self, path: Path) -> str:
        """Restore the backed-up content (or remove a file that did not exist); drop the backup."""
        copy, meta = self._slot(path)
        if not meta.is_file():
            rel = path.resolve().relative_to(self.root)
            raise KbError(f"no backup of {rel}: call backup_file before modifying a file")
        existed = json.loads(meta.read_text())["existed"]
        if existed:
            shutil.copy2(copy, path)
            copy.unlink()
            action = "restored"
        else:
            path.unlink(missing_ok=True)
            action = "removed (it did not exist before)"
        meta.unlink()
        return action

    def discard(self, path: Path) -> bool:
        """Success: keep the change and drop the backup."""
        copy, meta = self._slot(path)
        found = meta.is_file()
        copy.unlink(missing_ok=True)
        meta.unlink(missing_ok=True)
        return found
