"""The persisted run record: everything the cycle needs to resume after a crash.

One JSON file, `runs/<run-id>/record.json`, rewritten atomically after every state
transition and every measurement.  The state it names is the step to run next; each step
is written so that running it again after a crash is safe (measurements are retaken, a
half-made change is restored from its backup before the designer starts again, and a
rollback in progress is finished before anything else).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kbopt.errors import KbError
from kbopt.store import atomic_write

RUNS_DIR = Path("runs")
RECORD_NAME = "record.json"
RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,80}$")


class State(StrEnum):
    ANALYZE = "ANALYZE"
    PROFILE = "PROFILE"
    SELECT = "SELECT"
    STRATEGIZE = "STRATEGIZE"
    DESIGN = "DESIGN"
    VERIFY = "VERIFY"
    EVALUATE = "EVALUATE"
    LEARN = "LEARN"
    DONE = "DONE"


class AttemptStatus(StrEnum):
    DESIGNING = "designing"  # backup taken, designer at work (or interrupted)
    WAITING = "waiting"  # a person or an agent has the task; resume when they answer
    VERIFYING = "verifying"
    ROLLING_BACK = "rolling_back"  # decided; restore in progress (finish it on resume)
    APPLIED = "applied"
    ROLLED_BACK = "rolled_back"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Attempt(_Model):
    iteration: int
    optimization: str  # catalog entry id, or a free name for a change with no entry
    optimization_title: str = ""
    optimization_link: str | None = None
    strategy_rank: int | None = None  # where STRATEGIZE ranked it (1 = top), None if unranked
    from_version: str
    new_version: str
    language: str | None = None
    status: AttemptStatus = AttemptStatus.DESIGNING
    backup_dir: str = ""  # relative to the run folder
    task: str = ""  # the Optimization Task contract
    new_version_summary: str = ""  # the designer's New Version contract
    measurements: dict[str, dict[str, Any]] = Field(default_factory=dict)  # config -> Measurement
    changes_pct: dict[str, float] = Field(default_factory=dict)  # config -> time change %
    reason: str = ""
    report: str = ""  # the Optimization Applied report
    profile: str = ""  # profile of the new version at the primary configuration
    restored: list[str] = Field(default_factory=list)  # files put back on rollback
    learned: bool = False
    learn_draft: str | None = None  # a draft entry the designer proposes for LEARN
    # The kernel's own tests run in VERIFY: ran, passed, files, detail (kernel_tests).
    tests: dict[str, Any] = Field(default_factory=dict)

    @property
    def failed_correctness(self) -> bool:
        """Rolled back for a wrong result, a failed run or failed tests (VERIFY writes such
        reasons as `correctness: ...`), or refused unmade (`refused: ...`), not for its
        speed: says nothing about the change's effect on time."""
        return "correct" in self.reason or self.reason.startswith("refused")


class Event(_Model):
    time: str
    state: str
    message: str


class Learned(_Model):
    action: str  # add_optimization | add_anti_pattern | append_evidence | skipped
    entry: str
    path: str = ""
    detail: str = ""


class RunRecord(_Model):
    run_id: str
    kernel: str
    spec: str = ""  # how to find the kernel's spec again (empty: kernels/<kernel>/spec.py)
    created: str
    updated: str = ""
    backend: str
    designer: str
    target: str  # `metric op value`, checked at every configuration
    language: str | None = None  # forced by the user, else chosen by SELECT
    counters: str = "auto"
    configs: list[dict[str, Any]]
    max_iterations: int = 4
    state: State = State.ANALYZE
    iteration: int = 0
    start_version: str
    current_version: str
    devlog_overview: str = ""
    devlog_best: str = ""
    baseline: dict[str, dict[str, Any]] = Field(default_factory=dict)
    current: dict[str, dict[str, Any]] = Field(default_factory=dict)
    baseline_profile: str = ""  # the Profile contract of the starting version (PROFILE)
    profile: str = ""  # latest Profile contract of the current version (primary config)
    profile_from_counters: bool = False
    selected_language: str | None = None
    selection_reason: str = ""
    plan: list[dict[str, Any]] = Field(default_factory=list)  # ranked opportunities
    warnings: list[str] = Field(default_factory=list)
    attempts: list[Attempt] = Field(default_factory=list)
    learned: list[Learned] = Field(default_factory=list)
    lint_ok: bool | None = None
    lint_problems: list[str] = Field(default_factory=list)
    target_met: bool = False
    stop_reason: str = ""
    # Set when the designer could not go on (no API key, no applicable catalog move): the
    # run stopped short of its goal for that reason and `kbopt cycle` exits non-zero.
    designer_blocked: str = ""
    summary: str = ""
    events: list[Event] = Field(default_factory=list)

    def log(self, message: str) -> None:
        self.events.append(Event(time=now(), state=self.state.value, message=message))


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_run_id(kernel: str) -> str:
    return f"{dt.datetime.now(dt.UTC).strftime('%Y%m%dT%H%M%SZ')}-{kernel}"


def run_dir(root: Path, run_id: str) -> Path:
    if not RUN_ID_RE.match(run_id):
        raise KbError(f"invalid run id {run_id!r}: letters, digits, '.', '_' and '-' only")
    return root / RUNS_DIR / run_id


def save(record: RunRecord, folder: Path) -> Path:
    record.updated = now()
    path = folder / RECORD_NAME
    atomic_write(path, json.dumps(record.model_dump(mode="json"), indent=1) + "\n")
    return path


def load(folder: Path) -> RunRecord:
    path = folder / RECORD_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError:
        raise KbError(f"no run record at {path} (see `ls runs/`)") from None
    except ValueError as exc:
        raise KbError(f"{path}: not valid JSON: {exc}") from None
    try:
        return RunRecord.model_validate(data)
    except ValueError as exc:
        raise KbError(f"{path}: not a run record: {str(exc).splitlines()[0]}") from None
