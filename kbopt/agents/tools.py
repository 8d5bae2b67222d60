"""The tools the agents call, bound to the kbopt library.

Every tool is a `ToolSpec`: a name, a description, a pydantic input model
(`extra="forbid"`, so a bad input is refused with the field that is wrong), a handler
and the kbopt command line a Claude Code agent uses for the same thing.  `call_tool`
never raises: a bad input, a refused delegation, a path outside the project or a
failing library call come back to the model as a tool error it can read and fix.

The catalog tools go through `Store` (validated, atomic, locked writes that refresh
`catalog/`); commands (profile, benchmark, tests) go through the run's `Executor`,
so under a Remote Execution Context they run in the shared SLURM allocation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from kbopt.agents import roles
from kbopt.agents.errors import RunAborted, ToolError
from kbopt.agents.exports import exported_names, module_file, resolve_inside
from kbopt.agents.import_check import check_imports
from kbopt.agents.remote import CommandResult, Executor
from kbopt.agents.routing import DelegationRefused, check_delegation, route
from kbopt.agents.tool_inputs import (
    BenchmarkInput,
    ConvertKindInput,
    DelegateInput,
    DraftInput,
    EditInput,
    InteractionInput,
    KernelInput,
    ListExportsInput,
    NameInput,
    NarrowInput,
    PathInput,
    ProfileKernelInput,
    ProfileTextInput,
    RecordEvidenceInput,
    RouteInput,
    RunKernelInput,
    RunTestsInput,
    SearchInput,
    UpdateDevlogInput,
    WriteEntryInput,
    WriteFileInput,
)
from kbopt.errors import KbError, ProblemList
from kbopt.model import EvidenceBlock
from kbopt.store import Store

KNOWLEDGE_PREFIX = Path("docs") / "knowledge"
# Top-level paths no tool may write, back up or revert: version control and CI (a
# workflow or a submodule runs code elsewhere), the generated catalog (written by the
# store), the generated Claude Code definitions and MCP registration (written by
# `kbopt agent export-claude`), and kbopt's cache, where the backups live.
PROTECTED = (
    Path(".git"),
    Path(".github"),
    Path(".gitmodules"),
    Path(".gitlab-ci.yml"),
    Path(".ci"),
    Path("catalog"),
    Path(".claude"),
    Path(".mcp.json"),
    Path(".kbopt-cache"),
)
MAX_READ_CHARS = 60_000
MAX_READ_BYTES = 16 * 1024 * 1024
# A kernel, a test or a script is far below this; a 50 MB "source file" is a mistake.
MAX_WRITE_BYTES = 4 * 1024 * 1024


@dataclass
class RunState:
    """What one run has done so far; shared by every agent of the run."""

    existing_triton: bool = False  # a Triton kernel exists (given, or written by stage one)
    files_written: list[str] = field(default_factory=list)
    delegations: list[dict[str, str]] = field(default_factory=list)
    refusals: list[dict[str, str]] = field(default_factory=list)


@dataclass
class ToolContext:
    root: Path
    store: Store
    executor: Executor
    role: str = roles.ORCHESTRATOR
    sm: int | None = None
    timeout_s: float = 3600.0
    state: RunState = field(default_factory=RunState)
    # Set by the runner: run a delegated task as another agent, return its final text.
    delegate_fn: Callable[[str, str], str] | None = None
    # When set, the only folders (relative to the root) tools may write, back up or revert:
    # as the cycle's designer, the kernel's own folder, which the cycle backs up and can
    # restore byte for byte; a write anywhere else would survive a rollback.
    write_scope: tuple[Path, ...] = ()

    def for_role(self, role: str) -> ToolContext:
        """The same run (state, executor, store) seen by another agent."""
        return ToolContext(
            root=self.root,
            store=self.store,
            executor=self.executor,
            role=role,
            sm=self.sm,
            timeout_s=self.timeout_s,
            state=self.state,
            delegate_fn=self.delegate_fn,
            write_scope=self.write_scope,
        )


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_model: type[BaseModel]
    handler: Callable[[ToolContext, Any], Any]
    cli: str  # the same capability from a shell (Claude Code agents and skills)

    def schema(self) -> dict[str, Any]:
        """The tool definition sent to the Messages API."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": _inline_schema(self.input_model),
        }


@dataclass
class ToolOutcome:
    content: str
    is_error: bool = False


# --------------------------------------------------------------------------- paths


def project_path(ctx: ToolContext, path: str, *, for_write: bool = False) -> Path:
    """`path` resolved inside the project root; writes also avoid protected paths."""
    full, rel = resolve_inside(ctx.root, path)
    if for_write:
        check_writable(rel, ctx.write_scope)
    return full


def check_writable(rel: Path, scope: tuple[Path, ...] = ()) -> None:
    """Refuse a path (relative to the root) that no tool may change, or that holds one;
    with a `scope`, also one outside those folders."""
    if scope and not any(rel == folder or folder in rel.parents for folder in scope):
        names = ", ".join(str(folder) for folder in scope)
        raise ToolError(
            f"{rel} is outside {names}: in this run tools may change only those, which are "
            "backed up and restored if the step is rolled back"
        )
    if rel == Path("."):
        raise ToolError("the project root itself is not writable by tools; name a file")
    if ".git" in rel.parts:
        raise ToolError(f"{rel} is version control; not writable by tools")
    for protected in PROTECTED:
        if rel == protected or protected in rel.parents:
            raise ToolError(
                f"{rel} is version control, CI, generated or kbopt's own cache; not writable "
                "by tools"
            )
    if rel == KNOWLEDGE_PREFIX or KNOWLEDGE_PREFIX in rel.parents:
        raise ToolError(
            f"{rel} is in the knowledge base: use write_entry / record_evidence, "
            "which validate every write"
        )
    if rel in KNOWLEDGE_PREFIX.parents:
        raise ToolError(
            f"{rel} holds the knowledge base, which changes only through write_entry / "
            "record_evidence; name the file you change"
        )


def backup_path(ctx: ToolContext, path: str) -> Path:
    """`path` inside the root with its folders resolved but not its last name: a link is
    backed up and restored as the link it is, never followed."""
    base = ctx.root.resolve()
    raw = Path(path)
    joined = raw if raw.is_absolute() else base / raw
    if joined.name in ("", ".", ".."):
        full, _ = resolve_inside(ctx.root, path)
    else:
        full = joined.parent.resolve() / joined.name
    try:
        rel = full.relative_to(base)
    except ValueError:
        raise ToolError(f"path {path!r} is outside the project root; refused") from None
    check_writable(rel, ctx.write_scope)
    return full


def _single_link(full: Path) -> None:
    """A file with a second hard link may be a file outside the project: never read or
    written through it."""
    try:
        info = full.stat()
    except FileNotFoundError:
        return
    if info.st_nlink > 1 and not full.is_dir():
        raise ToolError(
            f"{full.name} is a hard link to a file that has another name (maybe outside the "
            "project); refused"
        )


def _bounded(data: bytes, what: str) -> bytes:
    if len(data) > MAX_WRITE_BYTES:
        raise ToolError(
            f"{what} would be {len(data)} bytes, more than the {MAX_WRITE_BYTES}-byte limit for "
            "a file written by a tool"
        )
    return data


def _rel(ctx: ToolContext, full: Path) -> str:
    return str(full.relative_to(ctx.root.resolve()))


# --------------------------------------------------------------------------- catalog tools


def _search(ctx: ToolContext, inp: SearchInput) -> Any:
    from kbopt.search import search

    hits = search(
        inp.query,
        kind=inp.kind.value if inp.kind else None,
        language=inp.language,
        bottleneck=inp.bottleneck.value if inp.bottleneck else None,
        metric=inp.metric,
        limit=inp.limit,
        store=ctx.store,
    )
    return [h.to_dict() for h in hits]


def _recommend(ctx: ToolContext, inp: ProfileTextInput) -> Any:
    from kbopt.contracts.profile import Profile
    from kbopt.ranking import default_language
    from kbopt.strategy import recommend

    profile = Profile.parse(inp.profile)
    language = default_language(profile.version) if inp.language is None else inp.language
    return recommend(profile, language=language, limit=inp.limit, store=ctx.store).to_dict()


def _show(ctx: ToolContext, inp: NameInput) -> Any:
    entry = ctx.store.get(inp.name)
    data = entry.model_dump(mode="json")
    found = ctx.store.find(inp.name)
    data["path"] = ctx.store.public_path(found) if found else entry.summary()["path"]
    return data


def _write_entry(ctx: ToolContext, inp: WriteEntryInput) -> Any:
    from kbopt.lint import lint
    from kbopt.template import parse_entry

    entry = parse_entry(inp.markdown, name=None, path="<write_entry>")
    if re.search(r"\bTODO\b", inp.markdown):
        raise ToolError("the entry still has TODO placeholders; fill every section")
    if not entry.evidence:
        raise ToolError(
            "an entry needs Performance Evidence (a local experiment with its command, or an "
            "external report naming its source)"
        )
    path = ctx.store.update(entry) if inp.update else ctx.store.write(entry)
    shown = ctx.store.display(path)
    problems = [str(p) for p in lint(ctx.store) if p.path == shown]
    return {
        "written": shown,
        "action": "updated" if inp.update else "created",
        "lint": problems or "clean",
    }


def _evidence_block(inp: RecordEvidenceInput | ConvertKindInput) -> EvidenceBlock:
    """The evidence fields both tools share, as the store's typed block."""
    return EvidenceBlock(
        source_type=inp.source_type,
        source=inp.source,
        device=inp.device,
        versions=inp.versions,
        date=inp.date,
        command=inp.command,
        rows=inp.rows,
    )


# A file named in an evidence Source: a relative path with a folder and an extension.
_SOURCE_FILE_RE = re.compile(r"(?<![\w/.:-])((?:[\w.-]+/)+[\w.-]+\.(?:json|csv|md|txt|log|toml))\b")


def missing_source_files(source: str, root: Path) -> list[str]:
    """Files a Source line names (results files, devlogs) that do not exist under `root`."""
    return [p for p in _SOURCE_FILE_RE.findall(source) if not (root / p).is_file()]


def _record_evidence(ctx: ToolContext, inp: RecordEvidenceInput) -> Any:
    from kbopt.lint import FAKE_DEVICE

    missing = missing_source_files(inp.source, ctx.root)
    if missing:
        raise ToolError(
            f"the evidence source names {', '.join(missing)}, which does not exist in the "
            "project: evidence cites the results file the tool that measured it wrote"
        )
    if FAKE_DEVICE in (inp.device or "") or "kbopt-fake" in (inp.versions or ""):
        raise ToolError("figures from the fake backend are stand-ins, never evidence")
    block = _evidence_block(inp)
    path = ctx.store.append_evidence(inp.name, block, status=inp.status)
    return {"updated": ctx.store.display(path), "rows_added": len(inp.rows)}


def _draft_entry(ctx: ToolContext, inp: DraftInput) -> Any:
    from kbopt.model import validate_name
    from kbopt.template import scaffold

    name = validate_name(inp.name)
    if ctx.store.find(name) is not None:
        raise ToolError(f"entry {name!r} already exists: show_entry it, then update it")
    language = inp.language.value if inp.language else None
    return {"markdown": scaffold(name, inp.kind.value, language)}


def _narrow_conditions(ctx: ToolContext, inp: NarrowInput) -> Any:
    from kbopt.model import Trigger

    triggers = [Trigger.parse(t) for t in inp.triggers]
    path = ctx.store.narrow_conditions(
        inp.name, contexts=inp.contexts or None, triggers=triggers or None, pitfall=inp.pitfall
    )
    return {"updated": ctx.store.display(path)}


def _add_interaction(ctx: ToolContext, inp: InteractionInput) -> Any:
    from kbopt.model import Interaction

    interaction = Interaction(relation=inp.relation, target=inp.target, note=inp.note)
    return {"updated": ctx.store.display(ctx.store.add_interaction(inp.name, interaction))}


def _convert_kind(ctx: ToolContext, inp: ConvertKindInput) -> Any:
    from kbopt.model import MetricEffect, Trigger

    block = _evidence_block(inp)
    path = ctx.store.convert_kind(
        inp.name,
        evidence=block,
        context=inp.context,
        failure=inp.failure,
        revealed_by=[MetricEffect(metric=m.metric, note=m.note) for m in inp.revealed_by],
        trigger=Trigger.parse(inp.trigger) if inp.trigger else None,
        situations=inp.situations,
        generalization=inp.generalization,
    )
    return {"moved_to": ctx.store.display(path)}


# --------------------------------------------------------------------------- devlog


def _read_devlog(ctx: ToolContext, inp: KernelInput) -> Any:
    from kbopt.devlog import PERF, Devlog

    log = Devlog.for_kernel(ctx.root, inp.kernel, create=False)
    return {
        "path": _rel(ctx, log.path) if log.path else None,
        "title": log.title,
        "overview": log.overview,
        "current_best": log.current_best,
        "performance": log.block(PERF),
        "entries": [e.heading for e in log.entries()],
    }


def _update_devlog(ctx: ToolContext, inp: UpdateDevlogInput) -> Any:
    from kbopt.contracts.profile import Profile
    from kbopt.devlog import BEST, Devlog

    log = Devlog.for_kernel(ctx.root, inp.kernel, create=True)
    if inp.section == "performance":
        # The performance block holds profile contracts, one per trial configuration.
        profile = Profile.parse(inp.text, path="<update_devlog>")
        log.set_performance_profile(profile, header=inp.heading or f"Profiled by {ctx.role}.")
    elif inp.section == "best":
        log.set_block(BEST, inp.text)
    else:
        if not inp.heading:
            raise ToolError("a devlog entry needs a heading: '<version> -- <date> -- <summary>'")
        log.add_entry(inp.heading, inp.text)
    path = log.save()
    return {"updated": _rel(ctx, path), "section": inp.section}


# --------------------------------------------------------------------------- commands


def _command_result(result: CommandResult) -> dict[str, object]:
    data = result.as_dict()
    data["ok"] = result.returncode == 0
    return data


def _kbopt_has_command(name: str) -> bool:
    from kbopt.cli import build_parser

    parser = build_parser()
    for action in parser._actions:
        choices = getattr(action, "choices", None)
        if isinstance(choices, dict) and name in choices:
            return True
    return False


def _config_value(inp: RunKernelInput) -> str | None:
    """The `--config` value: a trial name, or the dims as name=value pairs."""
    if inp.dims:
        bad = [f"{k}={v}" for k, v in inp.dims.items() if v < 1 or not k.isidentifier()]
        if bad:
            raise ToolError(f"dims must be name: positive integer, got {', '.join(bad)}")
        return ",".join(f"{k}={v}" for k, v in inp.dims.items())
    return inp.config


def _profile(ctx: ToolContext, inp: ProfileKernelInput) -> Any:
    if not _kbopt_has_command("profile"):
        raise ToolError("profiling is not available: `kbopt profile` is not in this checkout yet")
    if inp.config == "all" and not inp.dims:
        raise ToolError("profile one configuration per call: a trial name of the spec, or dims")
    # `--root .`: the command runs in the project root, local or remote.
    argv = [ctx.executor.python, "-m", "kbopt", "--root", ".", "profile", inp.kernel, inp.version]
    config = _config_value(inp)
    if config:
        argv += ["--config", config]
    argv.append("--json")
    if inp.language:
        argv += ["--language", inp.language.value]
    if inp.backend == "fake":
        argv += ["--backend", "fake"]
    if not inp.update_devlog:
        argv.append("--no-devlog")
    return _command_result(ctx.executor.run(argv, timeout=ctx.timeout_s))


def _benchmark(ctx: ToolContext, inp: BenchmarkInput) -> Any:
    spec = f"kernels/{inp.kernel}/spec.py"
    # Checked where the command runs: on the cluster when the files live there.
    if not ctx.executor.exists(spec, timeout=ctx.timeout_s):
        where = f" on {ctx.executor.remote.host}" if ctx.executor.remote else ""
        raise ToolError(
            f"benchmarking is not available: {spec} does not exist{where} for kernel "
            f"{inp.kernel!r} (`kbopt kernel new` scaffolds a kernel with its spec)"
        )
    # `kbopt bench` checks every version against the reference, then times it with the
    # ceilings of the same run, and writes its rows (device, versions, date, command).
    argv = [ctx.executor.python, "-m", "kbopt", "--root", ".", "bench", inp.kernel, "--json"]
    argv += ["--versions", inp.version]
    config = _config_value(inp)
    if config and config != "all":
        argv += ["--config", config]
    if inp.backend == "fake":
        argv += ["--backend", "fake"]
    return _command_result(ctx.executor.run(argv, timeout=ctx.timeout_s))


def _run_tests(ctx: ToolContext, inp: RunTestsInput) -> Any:
    target = project_path(ctx, inp.path)  # inside the project (checked without the files)
    rel = _rel(ctx, target) if target != ctx.root.resolve() else "."
    # Checked where the tests run: on the cluster when the files live there.
    if not ctx.executor.exists(rel, timeout=ctx.timeout_s):
        where = f" on {ctx.executor.remote.host}" if ctx.executor.remote else ""
        raise ToolError(f"no such test path{where}: {inp.path}")
    argv = [ctx.executor.python, "-m", "pytest", "-q", "-x", rel]
    if inp.keyword:
        argv += ["-k", inp.keyword]
    return _command_result(ctx.executor.run(argv, timeout=ctx.timeout_s))


# --------------------------------------------------------------------------- files


def _backups(ctx: ToolContext) -> Any:
    from kbopt.agents import safe_edit

    return safe_edit.Backups(ctx.root)


def _backup_file(ctx: ToolContext, inp: PathInput) -> Any:
    full = backup_path(ctx, inp.path)
    record = _backups(ctx).backup(full)
    return {"backed_up": _rel(ctx, full), **record}


def _revert_file(ctx: ToolContext, inp: PathInput) -> Any:
    full = backup_path(ctx, inp.path)
    action = _backups(ctx).revert(full)
    return {"reverted": _rel(ctx, full), "action": action}


def _discard_backup(ctx: ToolContext, inp: PathInput) -> Any:
    full = backup_path(ctx, inp.path)
    if not _backups(ctx).discard(full):
        raise ToolError(f"no backup of {_rel(ctx, full)} to discard")
    return {"kept": _rel(ctx, full), "backup": "discarded"}


def pending_backups(root: Path) -> list[str]:
    """Files backed up and neither reverted nor kept yet (reported at the end of a run)."""
    from kbopt.agents import safe_edit

    return safe_edit.Backups(root).pending()


def _not_a_file(shown: str, full: Path, hint: str = "") -> ToolError:
    """Why `full` cannot be read as a file: it is missing, or it is a folder (or another
    kind of file), said as it is so that the agent does not go looking for it."""
    from kbopt.textio import file_kind

    try:
        mode = full.stat().st_mode
    except OSError:
        return ToolError(f"no such file: {shown}{hint}")
    return ToolError(f"{shown} is {file_kind(mode)}, not a file")


def _read_file(ctx: ToolContext, inp: PathInput) -> Any:
    full = project_path(ctx, inp.path)
    if not full.is_file():
        raise _not_a_file(inp.path, full)
    _single_link(full)
    text = _read_utf8(full, inp.path, limit=MAX_READ_BYTES)
    shown = text[:MAX_READ_CHARS]
    return {"path": _rel(ctx, full), "text": shown, "truncated": len(text) > len(shown)}


def _require_backup(ctx: ToolContext, full: Path) -> None:
    """An existing file is changed only after backup_file (new files need none)."""
    if full.exists() and not _backups(ctx).has_backup(full):
        raise ToolError(
            f"{_rel(ctx, full)} has no backup: call backup_file on it before modifying it"
        )


def _read_utf8(full: Path, shown: str, *, limit: int) -> str:
    """A project file's text, bytes as they are (CRLF and a BOM kept), at most `limit`."""
    from kbopt.textio import read_bytes

    try:
        data = read_bytes(full, shown=shown, limit=limit)
    except KbError as exc:
        raise ToolError(str(exc)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{shown} is not UTF-8 text") from None


def _same_line_endings(text: str, piece: str) -> str:
    """`piece` with the file's line endings: an agent writes `\n`, a CRLF file keeps CRLF."""
    crlf = text.count("\r\n")
    if crlf and crlf == text.count("\n") and "\r" not in piece:
        return piece.replace("\n", "\r\n")
    return piece


def _edit_file(ctx: ToolContext, inp: EditInput) -> Any:
    full = project_path(ctx, inp.path, for_write=True)
    if not full.is_file():
        raise _not_a_file(inp.path, full, " (use write_file to create one)")
    _single_link(full)
    text = _read_utf8(full, inp.path, limit=MAX_WRITE_BYTES)
    old, new = _same_line_endings(text, inp.old), _same_line_endings(text, inp.new)
    count = text.count(old)
    if count != 1:
        raise ToolError(
            f"`old` occurs {count} times in {inp.path}; give text that occurs exactly once"
        )
    _require_backup(ctx, full)
    edited = text.replace(old, new, 1)
    check_imports(ctx.root, Path(_rel(ctx, full)), edited, before=text)
    from kbopt.store import atomic_write

    # Bytes in, bytes out: the mode (an executable script), the BOM and the line endings
    # of the file stay as they were.
    atomic_write(full, _bounded(edited.encode("utf-8"), inp.path))
    ctx.state.files_written.append(_rel(ctx, full))
    return {"edited": _rel(ctx, full)}


def _write_file(ctx: ToolContext, inp: WriteFileInput) -> Any:
    full = project_path(ctx, inp.path, for_write=True)
    existed = full.exists()
    if full.is_dir():
        raise ToolError(f"{inp.path} is a folder; name a file")
    _single_link(full)
    data = _bounded(inp.content.encode("utf-8"), inp.path)
    _require_backup(ctx, full)
    before = None
    if existed and full.suffix == ".py":
        before = _read_utf8(full, inp.path, limit=MAX_WRITE_BYTES)
    check_imports(ctx.root, Path(_rel(ctx, full)), inp.content, before=before)
    from kbopt.store import atomic_write

    atomic_write(full, data)
    ctx.state.files_written.append(_rel(ctx, full))
    return {"written": _rel(ctx, full), "created": not existed}


def _list_exports(ctx: ToolContext, inp: ListExportsInput) -> Any:
    path = module_file(ctx.root, inp.module)
    try:
        shown = _rel(ctx, path.resolve())
    except ValueError:  # an installed package outside the project
        shown = str(path)
    return {"module": inp.module, "path": shown, **exported_names(path)}


# --------------------------------------------------------------------------- routing / delegation


def _route(ctx: ToolContext, inp: RouteInput) -> Any:
    sm = inp.sm if inp.sm is not None else ctx.sm
    r = route(inp.request, sm=sm, existing_triton=inp.existing_triton or ctx.state.existing_triton)
    return r.as_dict()


def _delegate(ctx: ToolContext, inp: DelegateInput) -> Any:
    if ctx.delegate_fn is None:
        raise ToolError("delegation is not available outside a run")
    try:
        check_delegation(
            inp.specialist, inp.task, sm=ctx.sm, existing_triton=ctx.state.existing_triton
        )
    except DelegationRefused as exc:
        ctx.state.refusals.append({"specialist": inp.specialist, "rule": exc.rule})
        raise ToolError(str(exc)) from None
    if inp.specialist == roles.KERNEL_DESIGNER:
        _check_task_contract(inp.task)
    check_alive = getattr(ctx.executor, "check_alive", None)
    if check_alive is not None:
        # The one allocation every specialist shares must still be there; if it ended,
        # the whole run stops (no specialist can do anything in it).
        try:
            check_alive(timeout=min(ctx.timeout_s, 120.0))
        except KbError as exc:
            raise RunAborted(str(exc)) from None
    before = len(ctx.state.files_written)
    ctx.state.delegations.append({"specialist": inp.specialist, "task": inp.task})
    report = ctx.delegate_fn(inp.specialist, inp.task)
    wrote_python = any(p.endswith(".py") for p in ctx.state.files_written[before:])
    if inp.specialist == roles.TRITON and wrote_python:
        ctx.state.existing_triton = True  # stage one of the TileIR pipeline is done
    return {"specialist": inp.specialist, "report": report}


def _check_task_contract(task: str) -> None:
    """The orchestrator instructs the designer with the Optimization Task contract."""
    from kbopt.contracts.task import OptimizationTask

    start = task.find("## Optimization Task:")
    if start < 0:
        raise ToolError(
            "a task for kernel-designer carries the Optimization Task contract "
            "(`## Optimization Task: <kernel> <current> -> <new_version>` ...) followed by "
            "the launch template"
        )
    end = task.find("\nCreate ", start)  # the launch template may follow the contract
    try:
        OptimizationTask.parse(task[start : end if end > 0 else None], path="<task>")
    except KbError as exc:
        raise ToolError(f"the Optimization Task does not parse:\n{exc}") from None


# --------------------------------------------------------------------------- registry


def _generic_cli(name: str) -> str:
    # `<role>`: the caller's role; the Claude Code export writes each agent's own name.
    return f"kbopt agent tool {name} --role <role> --input '<json>'"


TOOLS: dict[str, ToolSpec] = {
    t.name: t
    for t in (
        ToolSpec(
            "search_catalog",
            "Full-text search of the optimization catalog; returns ranked entries.",
            SearchInput,
            _search,
            'kbopt search "<query>" [--kind K] [--language L] --json',
        ),
        ToolSpec(
            "recommend",
            "Ranked optimizations for a profile (profiler contract Markdown), with the "
            "triggering metric of each and anti-pattern warnings.",
            ProfileTextInput,
            _recommend,
            "kbopt recommend <profile.md> --json",
        ),
        ToolSpec(
            "show_entry",
            "One catalog entry with all its typed fields.",
            NameInput,
            _show,
            "kbopt show <name> --json",
        ),
        ToolSpec(
            "write_entry",
            "Create (or with update=true replace) a catalog entry from its whole Markdown "
            "file; validated, filed under its kind and language folder, indexed; returns lint "
            "findings.",
            WriteEntryInput,
            _write_entry,
            "kbopt add <draft.md> [--update] --json",
        ),
        ToolSpec(
            "draft_entry",
            "The entry template for a new name, to fill in and pass to write_entry.",
            DraftInput,
            _draft_entry,
            "kbopt new <kind> <name> [--language L]",
        ),
        ToolSpec(
            "narrow_conditions",
            "An entry shown wrong somewhere gets tighter When to Apply (contexts, "
            "triggers) or a pitfall.",
            NarrowInput,
            _narrow_conditions,
            _generic_cli("narrow_conditions"),
        ),
        ToolSpec(
            "add_interaction",
            "Record a new interaction between two entries (requires, enables, "
            "conflicts, composes, supersedes).",
            InteractionInput,
            _add_interaction,
            _generic_cli("add_interaction"),
        ),
        ToolSpec(
            "convert_kind",
            "An optimization shown to hurt becomes an anti-pattern (or back), with "
            "the situation and the measurement that showed it.",
            ConvertKindInput,
            _convert_kind,
            _generic_cli("convert_kind"),
        ),
        ToolSpec(
            "record_evidence",
            "Append a Performance Evidence block to an existing entry. A results file "
            "the Source names must exist; fake-backend figures are refused.",
            RecordEvidenceInput,
            _record_evidence,
            _generic_cli("record_evidence"),
        ),
        ToolSpec(
            "read_devlog",
            "Read a kernel's devlog docs/kernels/<kernel>.md (overview, current best, performance).",
            KernelInput,
            _read_devlog,
            _generic_cli("read_devlog"),
        ),
        ToolSpec(
            "update_devlog",
            "Update a section of a kernel's devlog (performance section, or a version's entry).",
            UpdateDevlogInput,
            _update_devlog,
            _generic_cli("update_devlog"),
        ),
        ToolSpec(
            "profile_kernel",
            "Profile one kernel version at one trial configuration (runs in the remote "
            "allocation when there is one); returns the command's JSON output.",
            ProfileKernelInput,
            _profile,
            "kbopt profile <kernel> <version> [--config TRIAL|dim=value,...] --json",
        ),
        ToolSpec(
            "run_benchmark",
            "Check and time kernel versions (comma-separated) side by side at the spec's trial "
            "points or given dims, with the device's ceilings measured in the same run.",
            BenchmarkInput,
            _benchmark,
            "kbopt bench <kernel> --versions <v1,v2> [--config TRIAL|dim=value,...] --json",
        ),
        ToolSpec(
            "run_tests",
            "Run pytest on a test file or folder of the project.",
            RunTestsInput,
            _run_tests,
            "python -m pytest -q -x <path>",
        ),
        ToolSpec(
            "backup_file",
            "Back up a project file before any modification (safe modification, step 1).",
            PathInput,
            _backup_file,
            _generic_cli("backup_file"),
        ),
        ToolSpec(
            "revert_file",
            "Restore a file from its backup (a regression or a failed check).",
            PathInput,
            _revert_file,
            _generic_cli("revert_file"),
        ),
        ToolSpec(
            "discard_backup",
            "Keep a validated change and drop its backup (safe modification, success).",
            PathInput,
            _discard_backup,
            _generic_cli("discard_backup"),
        ),
        ToolSpec(
            "read_file",
            "Read a text file inside the project.",
            PathInput,
            _read_file,
            _generic_cli("read_file"),
        ),
        ToolSpec(
            "edit_file",
            "Replace one exact occurrence of `old` by `new` in a project file (back it up "
            "first); a new import of a project module must name what that module defines.",
            EditInput,
            _edit_file,
            _generic_cli("edit_file"),
        ),
        ToolSpec(
            "write_file",
            "Create a project file (or overwrite a backed-up one); an import of a project "
            "module that names what the module does not define is refused, with its exports.",
            WriteFileInput,
            _write_file,
            _generic_cli("write_file"),
        ),
        ToolSpec(
            "list_exports",
            "The names a module really exports (read from its source) - call it before "
            "writing any import.",
            ListExportsInput,
            _list_exports,
            _generic_cli("list_exports"),
        ),
        ToolSpec(
            "route_request",
            "Which specialist(s) a request goes to under the routing rules, and the rule.",
            RouteInput,
            _route,
            'kbopt agent route "<request>" [--sm N] [--existing-triton] --json',
        ),
        ToolSpec(
            "delegate",
            "Delegate a task to a specialist or to the profiler / kernel-designer; a "
            "delegation to the wrong specialist is refused with the rule that forbids it.",
            DelegateInput,
            _delegate,
            'the Task tool, once `kbopt agent route "<task>" --to <specialist>` accepts it',
        ),
    )
}


# Tools that read or write project files: under a Remote Execution Context whose files
# live on the cluster (`files: remote`) they run there, through `kbopt agent tool`.
REMOTE_FILE_TOOLS = frozenset(
    {
        "read_file",
        "write_file",
        "edit_file",
        "backup_file",
        "revert_file",
        "discard_backup",
        "list_exports",
        "read_devlog",
        "update_devlog",
    }
)


def _forward_remote(ctx: ToolContext, name: str, inp: BaseModel) -> ToolOutcome:
    """Run one file tool on the cluster, in the remote project root, as the same role."""
    remote = ctx.executor.remote
    assert remote is not None
    argv = [remote.python, "-m", "kbopt", "--root", ".", "agent", "tool", name]
    argv += ["--role", ctx.role, "--input", inp.model_dump_json(exclude_none=True), "--json"]
    run_login = getattr(ctx.executor, "run_login", ctx.executor.run)
    result = run_login(argv, timeout=ctx.timeout_s)
    try:
        data = json.loads(result.stdout)
    except json.JSONDecodeError:
        return ToolOutcome(
            f"{name} on {remote.host} failed (exit {result.returncode}): "
            f"{(result.stderr or result.stdout).strip()[-2000:]}",
            True,
        )
    if "error" in data:  # a KbError printed by the remote CLI
        return ToolOutcome(f"{name} on {remote.host} failed: {'; '.join(data['error'])}", True)
    payload = data.get("result")
    text = payload if isinstance(payload, str) else json.dumps(payload, indent=1, default=str)
    ok = bool(data.get("ok", False))
    if ok and name in ("write_file", "edit_file"):
        ctx.state.files_written.append(str(getattr(inp, "path", "")))
    return ToolOutcome(text, not ok)


def tool_schemas(names: tuple[str, ...] | list[str]) -> list[dict[str, Any]]:
    return [TOOLS[n].schema() for n in names]


def call_tool(ctx: ToolContext, name: str, raw_input: object) -> ToolOutcome:
    """Run one tool for the agent `ctx.role`; every failure becomes a readable tool error."""
    role = roles.get_role(ctx.role)
    if name not in TOOLS or name not in role.tools:
        return ToolOutcome(
            f"tool {name!r} is not available to {ctx.role}; its tools: {', '.join(role.tools)}",
            True,
        )
    spec = TOOLS[name]
    try:
        inp = spec.input_model.model_validate(raw_input)
    except ValidationError as exc:
        return ToolOutcome(f"invalid input for {name}: {_validation_text(exc)}", True)
    remote = ctx.executor.remote
    if remote is not None and remote.files == "remote" and name in REMOTE_FILE_TOOLS:
        return _forward_remote(ctx, name, inp)
    try:
        result = spec.handler(ctx, inp)
    except ToolError as exc:
        return ToolOutcome(str(exc), True)
    except RunAborted:
        raise
    except ProblemList as exc:
        return ToolOutcome(f"{name} failed:\n{exc}", True)
    except KbError as exc:
        return ToolOutcome(f"{name} failed: {exc}", True)
    except ValidationError as exc:  # a value the library's models refuse
        return ToolOutcome(f"{name} failed: {_validation_text(exc)}", True)
    except (ValueError, OSError) as exc:
        return ToolOutcome(f"{name} failed: {type(exc).__name__}: {exc}", True)
    text = result if isinstance(result, str) else json.dumps(result, indent=1, default=str)
    return ToolOutcome(text)


def _validation_text(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(input)"
        parts.append(f"{loc}: {str(err['msg']).removeprefix('Value error, ')}")
    return "; ".join(parts)


def _inline_schema(model: type[BaseModel]) -> dict[str, Any]:
    """JSON schema without `$defs` references (plain, self-contained input schemas)."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return resolve(defs[node["$ref"].split("/")[-1]])
            return {k: resolve(v) for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    out: dict[str, Any] = resolve(schema)
    out["type"] = "object"
    return out
