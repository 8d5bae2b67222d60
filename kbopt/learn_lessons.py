"""LEARN from a kernel's results: `kbopt learn KERNEL` turns lessons into catalog evidence.

A lesson says what one measured change taught and which catalog entry it is evidence
for; the numbers come from the results rows (`kbopt.results`), never from the lesson.
Lessons live in `<kernel folder>/lessons.toml`:

    [defaults]                     # optional: any lesson field, for lessons that leave it out
    command = "bench"
    config_label = "MLA {config} b={b} s={s} t={t} h={h} bf16: {what}"

    [commands]                     # optional: named command templates
    bench = "python -m kernels.mla_decode.bench --repeat --versions {versions}"

    [[lesson]]
    entry = "split-kv-decode"      # the catalog entry (it must exist: `kbopt new ...`)
    before = "triton_v2"           # the two measured versions (or `family:variant` rows)
    after = "triton_v3"
    what = "no split -> 8 KV splits + combine kernel"   # the change, in the Config column
    validate = true                # set the entry's status to validated (default false)
    refines_gain = true            # the change is the entry's move in full: its measured
                                   # speed-up refines the entry's expected gain (default false)
    results_file = "20261202T092954Z-NVIDIA-H200.json"  # pin one run (default: the newest
                                   # file with both versions; else the newest rows anywhere)
    configs = ["decode"]           # only these configurations (default: all measured)
    command = "bench"              # a name in [commands] or a template; fields {versions}
                                   # (before, after without variants), {sweep}, {before},
                                   # {after}, {kernel} (default: kbopt bench KERNEL ...)
    sweep = ["bm64-bn32-st3"]      # variants the command times: fills {sweep}
    call_vs_graph = false          # before == after: per-call time against CUDA-graph replay
    host_time = false              # compare host time per call, not GPU time
    config_label = "..."           # the Config cell: {what}, {config}, {shape}, {dtype},
                                   # {kernel} and any field of the after row

Each lesson becomes one evidence block (a local experiment): Source (the results files and
rows, and the devlog), Device, Versions, Date and Command from the rows (the command the
rows record; the lesson's `command` for rows that record none), and one table row per
configuration, Before / After / Change computed from the two rows.  Blocks go through the
store's `append_evidence`; a block whose results files and rows the entry already cites is
not appended again (words added to its Source since do not count), so running LEARN twice
changes nothing.

A lesson with `refines_gain = true` measures the entry's own move, applied in full and
nothing else (not a partial step toward it, not a variant that shares its name): its
block's Source says so (`kbopt.workflow.learn.FULL_MOVE`), and once appended, the entry's
`expected_gain_pct` is refined by the rule a catalog move's measurement follows
(`kbopt.workflow.learn.refine_gain`: the running mean of the prior estimate and every such
measurement).  Evidence from the fake backend never refines anything.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from kbopt import results as res
from kbopt.devlog_options import read_toml, shown
from kbopt.errors import KbError
from kbopt.kernel import KernelSpec
from kbopt.lint import FAKE_DEVICE
from kbopt.model import EvidenceBlock, EvidenceRow
from kbopt.workflow.learn import FULL_MOVE, refine_gain

LESSONS_FILE = "lessons.toml"
DEFAULT_COMMAND = "kbopt bench {kernel} --versions {versions}"
DEFAULT_LABEL = "{kernel} {config} {shape} {dtype}: {what}"


@dataclass(frozen=True)
class Lesson:
    """One measured change and the catalog entry it is evidence for (see module doc)."""

    entry: str
    before: str
    after: str
    what: str
    validate: bool = False
    refines_gain: bool = False
    results_file: str | None = None
    configs: tuple[str, ...] | None = None
    command: str | None = None
    sweep: tuple[str, ...] = field(default=())
    call_vs_graph: bool = False
    host_time: bool = False
    config_label: str | None = None


_REQUIRED = ("entry", "before", "after", "what")
_FIELDS = {f.name for f in fields(Lesson)}


@dataclass
class LessonFile:
    path: Path
    lessons: list[Lesson]
    commands: dict[str, str]


def load_lessons(spec: KernelSpec) -> LessonFile:
    """The kernel's lessons.toml, checked field by field."""
    path = spec.folder / LESSONS_FILE
    if not path.is_file():
        raise KbError(
            f"{spec.name} has no lessons: write {shown(path)} (its format is in "
            "docs/guides/running-the-cycle.md, section 'Results, devlog, evidence')"
        )
    data = read_toml(path)
    unknown = sorted(set(data) - {"defaults", "commands", "lesson"})
    if unknown:
        raise KbError(
            f"{shown(path)}: unknown table(s) {', '.join(unknown)} (defaults, commands, lesson)"
        )
    defaults = dict(data.get("defaults", {}))
    commands = {str(k): str(v) for k, v in dict(data.get("commands", {})).items()}
    lessons = []
    for i, raw in enumerate(data.get("lesson", []), 1):
        item = {**defaults, **raw}
        where = f"{shown(path)}: lesson {i}" + (f" ({raw['entry']})" if "entry" in raw else "")
        bad = sorted(set(item) - _FIELDS)
        if bad:
            raise KbError(f"{where}: unknown field(s) {', '.join(bad)}")
        missing = [k for k in _REQUIRED if not item.get(k)]
        if missing:
            raise KbError(f"{where}: needs {', '.join(missing)}")
        for key in ("configs", "sweep"):
            if key in item:
                if not isinstance(item[key], list) or not all(
                    isinstance(x, str) for x in item[key]
                ):
                    raise KbError(f"{where}: {key} is a list of names")
                item[key] = tuple(item[key])
        for key in ("validate", "refines_gain", "call_vs_graph", "host_time"):
            if key in item and not isinstance(item[key], bool):
                raise KbError(f"{where}: {key} is true or false")
        lessons.append(Lesson(**item))
    if not lessons:
        raise KbError(f"{shown(path)}: no [[lesson]] in the file")
    return LessonFile(path, lessons, commands)


# ---------------------------------------------------------------------- evidence


def _timing(r: Mapping[str, Any], key: str = "time_us", pct: str = "pct_of_floor") -> str:
    return f"{r[key]:.1f} us ({r[pct]:.1f}% of floor)"


def compare(b: Mapping[str, Any], a: Mapping[str, Any], call_vs_graph: bool) -> dict[str, str]:
    """Before / After / Change cells: per-call times, with CUDA-graph replay times beside
    them when both rows have them, or one version's per-call time against its graph time."""
    if call_vs_graph:
        change = 100.0 * (a["time_us_graph"] / b["time_us"] - 1.0)
        return {
            "before": "per call " + _timing(b),
            "after": "graph replay " + _timing(a, "time_us_graph", "pct_of_floor_graph"),
            "change": f"{change:+.1f}% time",
        }
    change = 100.0 * (a["time_us"] / b["time_us"] - 1.0)
    cells = {"before": _timing(b), "after": _timing(a), "change": f"{change:+.1f}% time"}
    if b.get("time_us_graph") is not None and a.get("time_us_graph") is not None:
        g = 100.0 * (a["time_us_graph"] / b["time_us_graph"] - 1.0)
        cells["before"] += f"; graph {_timing(b, 'time_us_graph', 'pct_of_floor_graph')}"
        cells["after"] += f"; graph {_timing(a, 'time_us_graph', 'pct_of_floor_graph')}"
        cells["change"] += f" per call, {g:+.1f}% graph"
    return cells


def compare_host(b: Mapping[str, Any], a: Mapping[str, Any]) -> dict[str, str]:
    """Host time per call, with the per-call time it left."""
    change = 100.0 * (a["host_us_per_call"] / b["host_us_per_call"] - 1.0)
    return {
        "before": f"host {b['host_us_per_call']:.1f} us/call, per call {b['time_us']:.1f} us",
        "after": f"host {a['host_us_per_call']:.1f} us/call, per call {a['time_us']:.1f} us",
        "change": f"{change:+.1f}% host time",
    }


@dataclass(frozen=True)
class Where:
    """How evidence cites the kernel's files: from the project root."""

    results: str  # kernels/<k>/results
    devlog: str  # docs/kernels/<k>.md


def _fill(template: str, values: Mapping[str, Any], what: str) -> str:
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        raise KbError(f"{what} {template!r} names {exc}, which is not known here") from None


def command_for(lesson: Lesson, spec: KernelSpec, commands: Mapping[str, str]) -> str:
    """The reproducing command: a named template, a template, or `kbopt bench`."""
    template = lesson.command or DEFAULT_COMMAND
    template = commands.get(template, template)
    versions = [v for v in dict.fromkeys((lesson.before, lesson.after)) if ":" not in v]
    values = {
        "versions": ",".join(versions),
        "sweep": ",".join(lesson.sweep),
        "before": lesson.before,
        "after": lesson.after,
        "kernel": spec.name,
    }
    return _fill(template, values, f"lesson {lesson.entry}: command")


def evidence_block(
    rows: Sequence[res.Row],
    lesson: Lesson,
    spec: KernelSpec,
    where: Where,
    commands: Mapping[str, str] | None = None,
) -> EvidenceBlock:
    """The lesson's evidence, computed from the rows (see module doc)."""
    from kbopt.vocab import SourceType

    name = f"lesson {lesson.entry} ({lesson.before} -> {lesson.after})"
    # Prefer the newest results file that measured both sides (same run, same ceilings).
    by_file: dict[str, list[res.Row]] = {}
    for r in rows:
        by_file.setdefault(r["_file"], []).append(r)
    files = [
        f
        for f, frows in by_file.items()
        if res.newest_of(frows, lesson.before) and res.newest_of(frows, lesson.after)
    ]
    if lesson.results_file is not None:
        files = [f for f in files if f == lesson.results_file]
        if not files:
            raise KbError(
                f"{name}: {where.results}/{lesson.results_file} has no correct rows of both "
                "versions"
            )
    pool = by_file[files[-1]] if files else list(rows)
    before, after = res.newest_of(pool, lesson.before), res.newest_of(pool, lesson.after)
    configs = set(before) & set(after)
    if lesson.configs is not None:
        configs &= set(lesson.configs)
    table, used, last = [], set(), None
    recorded: set[str] = set()  # the commands the rows say measured them
    dtype = res.short_dtype(spec.dtype)
    for cfg in sorted(configs, key=lambda c: res.config_key(spec, c)):
        b, a = before[cfg], after[cfg]
        last = a
        used |= {b["_file"], a["_file"]}
        recorded |= {str(r.get("command") or "") for r in (b, a)}
        label_values = {
            **a,
            "config": cfg,
            "what": lesson.what,
            "shape": res.shape(a, spec.dim_names, sep=" "),
            "dtype": dtype,
            "kernel": spec.name,
        }
        cells = compare_host(b, a) if lesson.host_time else compare(b, a, lesson.call_vs_graph)
        label = _fill(lesson.config_label or DEFAULT_LABEL, label_values, f"{name}: config_label")
        table.append(EvidenceRow(config=label, **cells))
    if not table or last is None:
        only = f" in configurations {', '.join(lesson.configs)}" if lesson.configs else ""
        raise KbError(f"{name}: no correct rows of both versions{only} in {where.results}")
    return EvidenceBlock(
        source_type=SourceType.LOCAL_EXPERIMENT,
        source=", ".join(f"{where.results}/{f}" for f in sorted(used))
        + f" (rows {lesson.before}, {lesson.after}); devlog {where.devlog}"
        + (f"; {FULL_MOVE}" if lesson.refines_gain else ""),
        device=str(last["device"]),
        versions=res.software(last),
        date=str(last["date"])[:10],
        # The command that measured the rows, as they record it, when one command measured
        # them all; else the lesson's reproducing command (older rows carry none).
        command=(
            recorded.pop()
            if len(recorded) == 1 and "" not in recorded
            else command_for(lesson, spec, commands or {})
        ),
        rows=table,
    )


# ---------------------------------------------------------------------- writing


@dataclass
class LearnAction:
    entry: str
    action: str  # "appended" | "present" | "would append" (dry run)
    block: EvidenceBlock
    validate: bool
    refined: str = ""  # what refining the expected gain changed (appended, refines_gain)

    def as_dict(self) -> dict[str, Any]:
        return {
            "entry": self.entry,
            "action": self.action,
            "validate": self.validate,
            "refined": self.refined,
            "evidence": self.block.model_dump(mode="json"),
        }


def where_for(spec: KernelSpec, root: Path) -> Where:
    folder = res.results_dir(spec)
    try:
        rel = folder.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        rel = folder.as_posix()
    return Where(results=rel, devlog=f"docs/kernels/{spec.name}.md")


def _unmarked(source: str) -> str:
    return source.removesuffix(f"; {FULL_MOVE}")


_CITES = re.compile(r"^(?P<files>.+?) \(rows (?P<rows>[^;)]+)")


def _cites(source: str) -> tuple[str, str] | str:
    """What a lesson's block cites: its results files and its pair of rows.  An editor may
    add words to the Source (where the run was made, what else the step changed) without
    the block becoming a new citation."""
    m = _CITES.match(_unmarked(source))
    return (m["files"], m["rows"].strip()) if m else _unmarked(source)


def learn(spec: KernelSpec, root: Path, store: Any, *, dry_run: bool = False) -> list[LearnAction]:
    """Every lesson's evidence, appended where the entry does not cite it yet.

    All blocks are computed and every entry looked up before anything is written, so a
    mistake in one lesson leaves the catalog untouched."""
    from kbopt.vocab import Status

    lf = load_lessons(spec)
    where = where_for(spec, root)
    rows = res.load_rows(res.results_dir(spec))
    blocks = [(ls, evidence_block(rows, ls, spec, where, lf.commands)) for ls in lf.lessons]
    missing = sorted({ls.entry for ls, _ in blocks if store.find(ls.entry) is None})
    if missing:
        raise KbError(
            f"{lf.path.name} cites entries the catalog does not have: {', '.join(missing)}; "
            "create the entry first: kbopt new optimization NAME [--language L] (or "
            "anti-pattern), fill it, then run kbopt learn again"
        )
    actions = []
    for lesson, block in blocks:
        entry = store.get(lesson.entry)
        # The same measurement, with or without the full-move mark: a lesson that now says
        # `refines_gain` replaces its unmarked block (moved last, marked) rather than citing
        # the same rows twice; one that no longer says it keeps its marked block.
        same = [e for e in entry.evidence if _cites(e.source) == _cites(block.source)]
        remark = bool(same) and lesson.refines_gain and FULL_MOVE not in same[0].source
        if same and not remark:
            actions.append(LearnAction(lesson.entry, "present", block, lesson.validate))
        elif dry_run:
            actions.append(LearnAction(lesson.entry, "would append", block, lesson.validate))
        else:
            if remark:
                kept = entry.model_copy(deep=True)
                kept.evidence = [e for e in entry.evidence if e is not same[0]]
                store.update(kept)
            status = Status.VALIDATED if lesson.validate else None
            store.append_evidence(lesson.entry, block, status=status)
            refined = ""
            if lesson.refines_gain and FAKE_DEVICE not in (block.device or ""):
                refined = refine_gain(store, lesson.entry)
            actions.append(LearnAction(lesson.entry, "appended", block, lesson.validate, refined))
    return actions
