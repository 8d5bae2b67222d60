"""The toy project of the cycle tests: the one `python -m kbopt.workflow.demo` builds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kbopt.bench.backend import FakeBackend, Measurement
from kbopt.bench.trials import TrialConfig, default_matrix
from kbopt.kernel import KernelSpec, load_spec
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
    "StandInBackend",
    "make_project",
    "slower_copy_step",
    "start_scripted",
    "toy",
    "toy_configs",
    "version_source",
]


def make_project(root: Path, steps: list[dict[str, Any]]) -> Path:
    """The toy project with a copy of this repository's knowledge base."""
    return _make_project(root, steps, knowledge=REPO / "docs" / "knowledge")


def toy(root: Path) -> KernelSpec:
    """The toy kernel's spec in the project built by `make_project(root, ...)`."""
    return load_spec("toy", root)


def toy_configs(root: Path) -> list[TrialConfig]:
    """The toy kernel's default trial matrix (decode, spec)."""
    return default_matrix(toy(root))


class StandInBackend(FakeBackend):
    """The fake backend's figures under another name and device: lets a test exercise what
    LEARN writes (into the test's temporary catalog), which it refuses for fake figures."""

    name = "stand-in"

    def measure(self, *args: object, **kwargs: object) -> Measurement:
        m = super().measure(*args, **kwargs)  # type: ignore[arg-type]
        m.device, m.versions, m.note = "test-gpu", {"test-double": "1"}, ""
        return m


def start_scripted(root: Path, plan: Path, *, run_id: str | None = None) -> Any:
    """A cycle on the toy kernel from toy_v1 toward `pct_of_floor>=90`, on the fake
    backend, with the scripted designer reading `plan`: how most cycle tests start one."""
    from kbopt.store import Store
    from kbopt.workflow import cycle
    from kbopt.workflow.designers import ScriptedDesigner

    return cycle.start(
        root,
        kernel="toy",
        target="pct_of_floor>=90",
        start_version="toy_v1",
        backend=FakeBackend(root),
        designer=ScriptedDesigner.from_file(plan),
        designer_spec=f"scripted:{plan}",
        configs=toy_configs(root),
        store=Store(root),
        run_id=run_id,
    )
