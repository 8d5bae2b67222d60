"""Helpers shared by the site tests (a module, not conftest, so tests can import it)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from kbopt.site.generate import GENERATED_DIR

REPO = Path(__file__).resolve().parents[2]
INCLUDED_FROM_PAGES = ("results", "kernels")
_NOT_SOURCES = shutil.ignore_patterns("__pycache__", "third_party", "*.pyc")


def copy_project(dest: Path) -> Path:
    """conf.py, docs/ (knowledge base included, generated files not), catalog/, and the
    folders whose files pages include (results/, kernels/)."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(REPO / "conf.py", dest / "conf.py")
    shutil.copytree(
        REPO / "docs",
        dest / "docs",
        ignore=lambda folder, names: [GENERATED_DIR] if Path(folder) == REPO / "docs" else [],
    )
    # Pages may include files from outside docs/ (results tables, kernel results).
    for folder in ("catalog", *INCLUDED_FROM_PAGES):
        if (REPO / folder).is_dir():
            shutil.copytree(REPO / folder, dest / folder, ignore=_NOT_SOURCES)
    return dest


@dataclass(frozen=True)
class BuiltSite:
    root: Path  # the project copy
    out: Path  # the HTML output
    seconds: float
    built_at: float  # time.time() when the build started

    def html(self, page: str) -> str:
        return (self.out / page).read_text(encoding="utf-8")
