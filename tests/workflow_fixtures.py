"""The toy project of the cycle tests: the one `python -m kbopt.workflow.demo` builds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kbopt.workflow.demo import (
    FASTER_STEP,
    IN_PLACE_REGRESSION,
    WRONG_RESULT,
    slower_copy_step,
    version_source,
)
from kbopt.workflow.demo import make_project as _make_project

REPO = Path(__file__).resolve().parent.parent

__all__ = [
    "FASTER_STEP",
    "IN_PLACE_REGRESSION",
    "WRONG_RESULT",
    "make_project",
    "slower_copy_step",
    "version_source",
]


def make_project(root: Path, steps: list[dict[str, Any]]) -> Path:
    """The toy project with a copy of this repository's knowledge base."""
    return _make_project(root, steps, knowledge=REPO / "docs" / "knowledge")
