"""Helpers shared by the site tests (a module, not conftest, so tests can import it)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from kbopt.site.generate import GENERATED_DIR

REPO = Path(__file__).resolve().parents[2]


def copy_project(dest: Path) -> Path:
    """conf.py + docs/ (with the knowledge base, without generated files) + catalog/."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(REPO / "conf.py", dest / "conf.py")
    shutil.copytree(
        REPO / "docs",
        dest / "docs",
        ignore=lambda folder, names: [GENERATED_DIR] if Path(folder) == REPO / "docs" else [],
    )
    if (REPO / "catalog").is_dir():
        shutil.copytree(REPO / "catalog", dest / "catalog")
    return dest


@dataclass(frozen=True)
class BuiltSite:
    root: Path  # the project copy
    out: Path  # the HTML output
    seconds: float
    built_at: float  # time.time() when the build started

    def html(self, page: str) -> str:
        return (self.out / page).read_text(encoding="utf-8")
