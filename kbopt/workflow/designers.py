"""DESIGN is pluggable: who turns an Optimization Task into a New Version.

A designer implements `Designer`:

- `propose(record, ranked)` -> the `Proposal` for the next attempt (which optimization,
  which new version, which language), or None when it has nothing left to try;
- `design(task, ctx)` -> the `NewVersion` contract once the change is made, or None when
  the answer is not ready yet (the cycle then pauses in DESIGN and resumes later).

The cycle backs up the kernel's files before `design` and restores them on failure, so
a designer never has to undo its own changes.  Built in:

- `ScriptedDesigner`: follows a JSON plan of steps (a version change, a copy of a version
  with text edits, i.e. a parameter change); deterministic, no API key needed;
- `HumanDesigner`: writes the task to `runs/<id>/task-<n>.md` and waits for the person to
  write `runs/<id>/new-version-<n>.md` (the New Version contract), then `--resume`;
- `CatalogDesigner` (`kbopt.workflow.catalog_designer`, `--designer catalog`): applies
  the top-ranked entry's move to the kernel's knobs; no person, no LLM.

A designer that cannot go on (no API key, no applicable move) raises
`DesignerUnavailable`: the cycle stops there, records why, and `kbopt cycle` exits
non-zero, instead of counting an attempt that never happened as a failure.

Other designers (the LLM agents) register with `register_designer(name, factory)`.

Scripted plan format (JSON; an edit's path is a file of the kernel's folder when it is a
bare file name, else relative to the project root)::

    {"language": "triton",
     "steps": [
       {"optimization": "split-kv-decode",          # catalog id (or a free name)
        "new_version": "triton_v3",                 # an existing version: a version change
        "changes": ["8 KV splits + combine"]},
       {"optimization": "larger-kv-tiles",
        "new_version": "toy_v3", "copy_from": "toy_v2",   # new file from an existing one
        "edits": [{"path": "toy_v3.py", "old": "BLOCK_N = 32", "new": "BLOCK_N = 64"}],
        "learn_draft": "drafts/larger-kv-tiles.md"}]}   # optional entry proposed for LEARN
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kbopt.bench.backend import MeasurementBackend, measure_with_backoff
from kbopt.bench.trials import TrialConfig
from kbopt.contracts.new_version import NewVersion, TrialCheck
from kbopt.contracts.task import OptimizationTask
from kbopt.errors import KbError, ProblemList, VersionFailed
from kbopt.kernel import KernelSpec
from kbopt.workflow.record import RunRecord


class DesignerUnavailable(KbError):
    """The designer cannot run or has nothing it can do: the cycle stops, saying why."""

    def __init__(self, message: str, details: Sequence[str] = ()):
        super().__init__(message)
        self.details = list(details)


@dataclass
class Proposal:
    optimization: str
    new_version: str
    language: str | None = None
    title: str = ""
    link: str | None = None
    rationale: str = ""
    learn_draft: str | None = None


@dataclass
class DesignContext:
    root: Path
    kernel: str
    spec: KernelSpec
    run_dir: Path
    iteration: int
    backend: MeasurementBackend
    configs: list[TrialConfig]
    devlog_path: Path


class Designer(Protocol):
    name: str

    def propose(
        self, record: RunRecord, ranked: Sequence[Mapping[str, Any]]
    ) -> Proposal | None: ...

    def design(self, task: OptimizationTask, ctx: DesignContext) -> NewVersion | None: ...


@dataclass
class Edit:
    path: str
    old: str
    new: str


@dataclass
class ScriptStep:
    optimization: str
    new_version: str
    changes: list[str] = field(default_factory=list)
    copy_from: str | None = None
    edits: list[Edit] = field(default_factory=list)
    rationale: str = ""
    learn_draft: str | None = None


class ScriptedDesigner:
    """Applies the plan's steps in order, one per attempt."""

    name = "scripted"

    def __init__(self, steps: list[ScriptStep], language: str | None = None, source: str = ""):
        self.steps = steps
        self.language = language
        self.source = source

    @classmethod
    def from_file(cls, path: Path) -> ScriptedDesigner:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise KbError(f"cannot read the designer plan {path}: {exc.strerror}") from None
        except ValueError as exc:
            raise KbError(f"{path}: the designer plan is not valid JSON: {exc}") from None
        steps = []
        for i, s in enumerate(data.get("steps", []), 1):
            try:
                steps.append(
                    ScriptStep(
                        optimization=s["optimization"],
                        new_version=s["new_version"],
                        changes=list(s.get("changes", [])),
                        copy_from=s.get("copy_from"),
                        edits=[Edit(e["path"], e["old"], e["new"]) for e in s.get("edits", [])],
                        rationale=s.get("rationale", ""),
                        learn_draft=s.get("learn_draft"),
                    )
                )
            except (KeyError, TypeError) as exc:
                raise KbError(f"{path}: step {i} lacks {exc} (see `kbopt cycle --help`)") from None
        if not steps:
            raise KbError(f"{path}: the designer plan has no steps")
        return cls(steps, data.get("language"), str(path))

    def propose(self, record: RunRecord, ranked: Sequence[Mapping[str, Any]]) -> Proposal | None:
        index = len(record.attempts)
        if index >= len(self.steps):
            return None
        step = self.steps[index]
        match = next((r for r in ranked if r.get("id") == step.optimization), None)
        return Proposal(
            optimization=step.optimization,
            new_version=step.new_version,
            language=self.language,
            title=str(match["title"]) if match else step.optimization,
            link=str(match["path"]) if match else None,
            rationale=step.rationale or "; ".join(step.changes) or "scripted step",
            learn_draft=step.learn_draft,
        )

    def design(self, task: OptimizationTask, ctx: DesignContext) -> NewVersion:
        step = self.steps[ctx.iteration - 1]
        kdir = ctx.spec.folder
        created: list[str] = []
        modified: list[str] = []
        if step.copy_from:
            src = kdir / f"{step.copy_from}.py"
            dst = kdir / f"{step.new_version}.py"
            if not src.is_file():
                raise KbError(f"scripted step {ctx.iteration}: no {src.name} to copy from")
            shutil.copyfile(src, dst)
            created.append(_rel(ctx.root, dst))
        for e in step.edits:
            # A bare file name is a file of the kernel's folder (which may lie outside the
            # project); any other relative path is relative to the project root.
            p = kdir / e.path if "/" not in e.path else ctx.root / e.path
            try:
                text = p.read_text(encoding="utf-8")
            except OSError as exc:
                raise KbError(
                    f"scripted step {ctx.iteration}: cannot read {e.path}: {exc.strerror}"
                ) from None
            if text.count(e.old) != 1:
                raise KbError(
                    f"scripted step {ctx.iteration}: {e.path} has {text.count(e.old)} copies of "
                    f"{e.old!r}; an edit needs exactly one"
                )
            p.write_text(text.replace(e.old, e.new), encoding="utf-8")
            rel = _rel(ctx.root, p)
            if rel not in created and rel not in modified:
                modified.append(rel)
        # A designer checks its own correctness before handing back (A5): one run at the
        # first configuration against the reference.
        try:
            m = measure_with_backoff(ctx.backend, ctx.spec, step.new_version, ctx.configs[0])
            correct = m.correct
            detail = f"rel. error {m.error:.3g}" if m.error is not None else ""
            if m.tolerance is not None and detail:
                detail += f" (tolerance {m.tolerance:g})"
        except VersionFailed as exc:  # written, but it raises when called
            correct, detail = False, f"does not run: {exc}"[:300]
        return NewVersion(
            kernel=ctx.kernel,
            version=step.new_version,
            changes=step.changes or [f"switch to {step.new_version}"],
            created=created,
            modified=modified,
            correct=correct,
            correctness_detail=detail,
            trials=[TrialCheck(dims=c.dims_dict, why=c.why or c.name) for c in ctx.configs],
            devlog_entry=_rel(ctx.root, ctx.devlog_path),
        )


class HumanDesigner:
    """Hands the task to a person through two files in the run folder."""

    name = "human"

    def __init__(self, language: str | None = None):
        self.language = language

    def propose(self, record: RunRecord, ranked: Sequence[Mapping[str, Any]]) -> Proposal | None:
        tried = {a.optimization for a in record.attempts}
        for r in ranked:
            if r["id"] not in tried:
                n = len(record.attempts) + 1
                return Proposal(
                    optimization=str(r["id"]),
                    new_version=f"{record.current_version}_h{n}",
                    language=self.language or record.selected_language,
                    title=str(r.get("title", r["id"])),
                    link=str(r.get("path")) if r.get("path") else None,
                    rationale=f"ranked #{ranked.index(r) + 1} by the strategy; trigger {r.get('trigger') or 'text match'}",
                )
        return None

    def design(self, task: OptimizationTask, ctx: DesignContext) -> NewVersion | None:
        task_path = ctx.run_dir / f"task-{ctx.iteration}.md"
        answer = ctx.run_dir / f"new-version-{ctx.iteration}.md"
        if not task_path.exists():
            task_path.write_text(
                task.render()
                + "\n<!-- Implement the change, then write the New Version contract to "
                + f"{answer.name} in this folder and run `kbopt cycle {ctx.kernel} --resume "
                + f"{ctx.run_dir.name}`. -->\n",
                encoding="utf-8",
            )
        if not answer.exists():
            return None
        try:
            return NewVersion.parse(answer.read_text(encoding="utf-8"), path=str(answer))
        except ProblemList:
            raise


DesignerFactory = Callable[[str, Path], Designer]
_REGISTRY: dict[str, DesignerFactory] = {}


def register_designer(name: str, factory: DesignerFactory) -> None:
    """Make `--designer name[:argument]` available (the agents package registers its own)."""
    _REGISTRY[name] = factory


def make_designer(spec: str, root: Path) -> Designer:
    """`scripted:PLAN.json`, `human`, `human:LANGUAGE`, `catalog`, or a registered `name[:arg]`."""
    name, _, arg = spec.partition(":")
    if name == "scripted":
        if not arg:
            raise KbError("the scripted designer needs a plan: --designer scripted:PLAN.json")
        path = Path(arg)
        return ScriptedDesigner.from_file(path if path.is_absolute() else root / path)
    if name == "human":
        return HumanDesigner(arg or None)
    if name == "catalog":
        from kbopt.workflow.catalog_designer import CatalogDesigner

        if arg:
            raise KbError("the catalog designer takes no argument: --designer catalog")
        return CatalogDesigner(root)
    if name in _REGISTRY:
        return _REGISTRY[name](arg, root)
    known = ", ".join(["scripted:PLAN.json", "human", "catalog", *sorted(_REGISTRY)])
    raise KbError(f"unknown designer {spec!r}; use one of: {known}")


def _rel(root: Path, p: Path) -> str:
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(p)
