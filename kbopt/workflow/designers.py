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

A step writes its change into its new version, and may edit other files of the kernel's
folder (a shared helper module), never the version it starts from, nor an existing
version the run did not write: `DesignContext.protected` names those files, and a designer
that would write one raises `StepRefused` before writing anything (VERIFY checks the same
afterwards for every designer, and rolls the step back).

Other designers (the LLM agents) register with `register_designer(name, factory)`.

Scripted plan format (JSON; an edit's path is a file of the kernel's folder when it is a
bare file name, else relative to the project root, and must lie in the kernel's folder:
the cycle backs up that folder only).  `optimization` names a catalog entry; a change no
entry describes gets a descriptive name that is not an entry name (with spaces or
capitals), or carries the draft of its entry (`learn_draft`)::

    {"language": "triton",
     "steps": [
       {"optimization": "split-kv-decode",          # a catalog entry
        "new_version": "triton_v3",                 # an existing version: a version change
        "changes": ["8 KV splits + combine"]},
       {"optimization": "BLOCK_N 64 -> 128",        # a free name: no catalog entry
        "new_version": "triton_v3_bn128", "copy_from": "triton_v3",
        "edits": [{"path": "triton_v3_bn128.py", "old": "BLOCK_N = 64", "new": "BLOCK_N = 128"}]},
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
from typing import TYPE_CHECKING, Any, Protocol

from kbopt.bench.backend import MeasurementBackend, measure_with_backoff
from kbopt.bench.trials import TrialConfig
from kbopt.contracts.new_version import NewVersion, TrialCheck
from kbopt.contracts.task import OptimizationTask
from kbopt.errors import KbError, ProblemList, VersionFailed
from kbopt.kernel import KernelSpec
from kbopt.workflow.record import RunRecord

if TYPE_CHECKING:
    from kbopt.store import Store


class DesignerUnavailable(KbError):
    """The designer cannot run or has nothing it can do: the cycle stops, saying why."""

    def __init__(self, message: str, details: Sequence[str] = ()):
        super().__init__(message)
        self.details = list(details)


class StepRefused(KbError):
    """The step would write a file it must not (see `DesignContext.protected`), or one the
    cycle does not back up: refused before anything is written.  The cycle records the
    attempt as refused and goes on."""


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
    # Files the step must not write, with why: the version it starts from, and its new
    # version when that exists and this run did not write it (someone's own work).
    protected: dict[Path, str] = field(default_factory=dict)


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
    def from_file(cls, path: Path, store: Store | None = None) -> ScriptedDesigner:
        """The plan at `path`; with a `store`, a step naming an entry the catalog lacks is
        refused (a typo would otherwise run the step and learn nothing from it)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise KbError(f"cannot read the designer plan {path}: {exc.strerror}") from None
        except ValueError as exc:
            raise KbError(f"{path}: the designer plan is not valid JSON: {exc}") from None
        shape = (
            '{"language": ..., "steps": [{"optimization", "new_version", "copy_from", '
            '"changes": [...], "edits": [{"path", "old", "new"}]}, ...]} (as the cycle-plan.json '
            "`kbopt kernel new` writes)"
        )
        if not isinstance(data, dict) or not isinstance(data.get("steps", []), list):
            raise KbError(f"{path}: a designer plan is a JSON object {shape}")
        steps = []
        for i, s in enumerate(data.get("steps", []), 1):
            if not isinstance(s, dict):
                raise KbError(f"{path}: step {i} is not a JSON object; a plan is {shape}")
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
        for i, step in enumerate(steps, 1):
            if store is None or step.learn_draft or not _is_entry_name(step.optimization):
                continue  # a free name, or an entry the step's own draft proposes
            if store.find(step.optimization) is None:
                raise KbError(
                    f"{path}: step {i}: no catalog entry {step.optimization!r} (see `kbopt "
                    "list`); name a change no entry describes in words (with spaces), or "
                    "give the step a learn_draft"
                )
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
        # A bare file name is a file of the kernel's folder (which may lie outside the
        # project); any other relative path is relative to the project root.
        edits = [(kdir / e.path if "/" not in e.path else ctx.root / e.path, e) for e in step.edits]
        dst = kdir / f"{step.new_version}.py"
        targets = ([dst] if step.copy_from else []) + [p for p, _ in edits]
        _refuse_protected(ctx, targets, f"scripted step {ctx.iteration}")
        if step.copy_from:
            src = kdir / f"{step.copy_from}.py"
            if not src.is_file():
                raise KbError(f"scripted step {ctx.iteration}: no {src.name} to copy from")
            shutil.copyfile(src, dst)
            created.append(_rel(ctx.root, dst))
        for p, e in edits:
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
        from kbopt.store import Store

        path = Path(arg)
        return ScriptedDesigner.from_file(
            path if path.is_absolute() else root / path, store=Store(root)
        )
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


def _refuse_protected(ctx: DesignContext, targets: Sequence[Path], who: str) -> None:
    """StepRefused, before anything is written, when a target is a protected file or lies
    outside the kernel's folder (the only folder the cycle backs up and restores)."""
    folder = ctx.spec.folder.resolve()
    protected = {p.resolve(): why for p, why in ctx.protected.items()}
    for target in targets:
        resolved = target.resolve()
        shown = _rel(ctx.root, target)
        if resolved in protected:
            raise StepRefused(f"{who} would write {shown}, {protected[resolved]}")
        if not resolved.is_relative_to(folder):
            raise StepRefused(
                f"{who} would write {shown}, outside the kernel's folder "
                f"{_rel(ctx.root, folder)} (the cycle backs up and restores that folder only)"
            )


def _is_entry_name(name: str) -> bool:
    from kbopt.model import NAME_RE

    return bool(NAME_RE.match(name))


def _rel(root: Path, p: Path) -> str:
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(p)
