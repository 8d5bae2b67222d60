"""Markdown <-> Entry: the entry file's template, typed.

File shape (sections in exactly this order)::

    ---
    kind: optimization            # classification: the front matter's only job
    language: triton              # absent for shared entries
    applies_to: [attention-decode, mla]
    bottlenecks: [memory]
    impact: high
    expected_gain_pct: 40
    risk: low
    status: validated
    created: 2026-12-02
    updated: 2026-12-02
    room_to_act: ["ctas_per_sm >= 2"]  # optional: When to Apply conditions that say there
                                  # is room for the move, not that the problem is present
    defining: ["global_reduction_sectors > 0"]  # optional: conditions that are the problem
                                  # itself: measured false, the entry cannot apply
    moves:                        # optional: what it does to a kernel's knobs, by role
      - change: {splits: "one_wave"}   # (kbopt.moves); on an anti-pattern, the way out
        when: ["ctas_per_sm < 1"]
    ---

    # Title
    ## When to Apply        prose bullets = contexts; bullets opening with `metric op value` = triggers
    ## Mechanism
    ## Affected Metrics     - `metric_name`: how it moves
    ## Implementation       one ```python fence
    ## Performance Evidence Source type: / Source: / [Device: Versions: Date: Command:] + table
    ## Generalization
    ## Pitfalls             bullets
    ## Interactions         - relation `target`: note

`parse_entry` collects every problem with its line number instead of stopping at the
first; `render_entry` writes the canonical form, and `render(parse(x))` is a fixed point.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from pydantic import ValidationError

from kbopt.errors import Problem, ProblemList
from kbopt.markdown import is_separator, split_row
from kbopt.model import (
    Entry,
    EvidenceBlock,
    Interaction,
    MetricEffect,
    Trigger,
    trigger_groups,
)
from kbopt.textio import control_char_problem
from kbopt.vocab import EVIDENCE_COLUMNS, OPERATORS, SECTIONS, Relation

FRONT_MATTER_KEYS = (
    "name",
    "kind",
    "language",
    "applies_to",
    "bottlenecks",
    "impact",
    "expected_gain_pct",
    "risk",
    "status",
    "created",
    "updated",
    "room_to_act",  # optional: When to Apply conditions that are room to act, not symptoms
    "defining",  # optional: When to Apply conditions that are the problem itself
    "moves",  # optional: machine-applicable moves on a kernel's knobs (kbopt.moves)
)
PROVENANCE_KEYS = {
    "source": "source",
    "device": "device",
    "versions": "versions",
    "date": "date",
    "command": "command",
}
_BULLET_RE = re.compile(r"^\s*[-*]\s+(.*)$")
_CODE_LEAD_RE = re.compile(r"^`([^`]+)`\s*(?:[:—–-]\s*)?(.*)$")
_INTERACTION_RE = re.compile(
    r"^(?P<rel>[a-z-]+)\s+`(?P<target>[^`]+)`\s*(?:[:—–-]\s*)?(?P<note>.*)$"
)
_KV_RE = re.compile(r"^(?P<key>[A-Za-z ]+):\s*(?P<value>.*)$")
_LOOKS_LIKE_TRIGGER = re.compile("|".join(re.escape(o) for o in OPERATORS))
# `A` or `B` [or `C`...] opening a bullet: alternative triggers of one condition
_ALTERNATIVES_RE = re.compile(r"^(`[^`]+`(?:\s+or\s+`[^`]+`)+)\s*(?:[:—–-]\s*)?(.*)$")
_CODE_RE = re.compile(r"`([^`]+)`")
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _FrontMatterLoader(_BaseLoader):
    """libyaml's safe loader (when present: ~10x faster on a 10,000-entry index rebuild)
    with two changes: dates stay text, so that `2026-02-30` is reported by the entry's
    validation instead of crashing YAML's date constructor, and a key given twice is an
    error instead of the last one silently winning."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key is not None and key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"key {key!r} appears twice (first on line {seen[key] + 2})",
                    key_node.start_mark,
                )
            if key is not None:
                seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


_FrontMatterLoader.add_constructor(
    "tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node)
)
# Anchors and aliases: nothing in an entry's front matter needs them, and an alias bomb
# (a few lines expanding into billions of items) would stall validation.
_ANCHOR_TOKENS = (yaml.AnchorToken, yaml.AliasToken)


@dataclass
class _Section:
    title: str
    line: int  # 1-based line of the heading in the file
    lines: list[tuple[int, str]] = field(default_factory=list)


class _Collector:
    def __init__(self, path: str):
        self.path = path
        self.problems: list[Problem] = []

    def add(self, line: int, message: str) -> None:
        self.problems.append(Problem(message, self.path, line))


def parse_entry(text: str, name: str | None = None, path: str = "<entry>") -> Entry:
    """Parse one entry file; raise `ProblemList` naming every problem as `path:line:`.

    `name` is the file stem when the file lives in the knowledge base; the front matter's
    `name:` must agree with it.  Without a stem (a draft given to `kbopt add`) the front
    matter's `name:` is the name.
    """
    out = _Collector(path)
    control = control_char_problem(text, path)
    if control is not None:
        raise ProblemList([control])
    fm, fm_lines, body_start = _split_front_matter(text, out)
    front_matter_broken = bool(out.problems)
    lines = text.splitlines()
    title, sections = _split_sections(lines, body_start, out)

    data: dict[str, Any] = {"title": title or ""}
    if name:
        data["name"] = name
    for key, value in fm.items():
        if key not in FRONT_MATTER_KEYS:
            allowed = ", ".join(FRONT_MATTER_KEYS)
            out.add(fm_lines.get(key, 1), f"unknown front-matter key {key!r} (allowed: {allowed})")
            continue
        if key == "name":
            if name and value != name:
                out.add(
                    fm_lines.get(key, 1),
                    f"file name '{name}.md' does not match the entry name {value!r}",
                )
            data[key] = name if name else value
            continue
        data[key] = value
    by_title = {s.title: s for s in sections}
    # Where a field that lives in the body is, for validation errors.
    by_title_field = {
        field_name: by_title[title].line
        for field_name, title in (
            ("contexts", "When to Apply"),
            ("triggers", "When to Apply"),
            ("pitfalls", "Pitfalls"),
            ("interactions", "Interactions"),
            ("evidence", "Performance Evidence"),
            ("affected_metrics", "Affected Metrics"),
        )
        if title in by_title
    }

    marks = {key: data.pop(key) for key in TRIGGER_MARKS if key in data}
    when = by_title.get("When to Apply")
    if when is not None:
        data["contexts"], data["triggers"] = _parse_when(when, out)
    for key, listed in marks.items():
        if when is None:
            out.add(fm_lines.get(key, 1), f"{key}: the entry has no When to Apply")
        else:
            data["triggers"] = _mark_triggers(
                key, listed, data["triggers"], fm_lines.get(key, 1), out
            )
    if (s := by_title.get("Mechanism")) is not None:
        data["mechanism"] = _prose(s)
    if (s := by_title.get("Affected Metrics")) is not None:
        data["affected_metrics"] = _parse_metrics(s, out)
    if (s := by_title.get("Implementation")) is not None:
        data["implementation"] = _parse_code(s, out)
    if (s := by_title.get("Performance Evidence")) is not None:
        data["evidence"] = _parse_evidence(s, out)
    if (s := by_title.get("Generalization")) is not None:
        data["generalization"] = _prose(s)
    if (s := by_title.get("Pitfalls")) is not None:
        data["pitfalls"] = [t for _, t in _bullets(s, out)]
    if (s := by_title.get("Interactions")) is not None:
        data["interactions"] = _parse_interactions(s, out)

    entry: Entry | None = None
    try:
        entry = Entry.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            msg = err["msg"].removeprefix("Value error, ")
            # An entry-wide check names its field first ("updated (...) is before ...").
            loc = err["loc"][0] if err["loc"] else re.split(r"[\s:]", msg, maxsplit=1)[0]
            line = fm_lines.get(str(loc), 1)
            if loc == "title":
                line = body_start + 1
            elif loc in by_title_field:
                line = by_title_field[str(loc)]
            field_name = ".".join(str(p) for p in err["loc"])
            if err["type"] == "missing":
                if front_matter_broken:
                    continue  # the broken front matter was reported: no key is "missing"
                msg = "missing required front-matter key"
            out.add(line, f"{field_name}: {msg}" if field_name else msg)
    if out.problems:
        raise ProblemList(list(out.problems))
    assert entry is not None
    return entry


def _split_front_matter(text: str, out: _Collector) -> tuple[dict[str, Any], dict[str, int], int]:
    """Return (front matter, key -> line, index of the first body line)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        out.add(1, "missing YAML front matter (the file must start with a '---' line)")
        return {}, {}, 0
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        out.add(1, "front matter is not closed by a second '---' line")
        return {}, {}, len(lines)
    raw = "\n".join(lines[1:end])
    key_lines = {}
    for i in range(1, end):
        m = re.match(r"^([A-Za-z_][\w-]*)\s*:", lines[i])
        if m:
            key_lines[m.group(1)] = i + 1
    try:
        if ("&" in raw or "*" in raw) and any(
            isinstance(t, _ANCHOR_TOKENS) for t in yaml.scan(raw, Loader=_BaseLoader)
        ):
            out.add(2, "front matter uses YAML anchors or aliases (& / *); write the values out")
            return {}, key_lines, end + 1
        fm = yaml.load(raw, Loader=_FrontMatterLoader) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = (mark.line + 2) if mark is not None else 2
        out.add(line, f"front matter is not valid YAML: {getattr(exc, 'problem', exc)}")
        return {}, key_lines, end + 1
    if not isinstance(fm, dict):
        out.add(2, "front matter must be a mapping of keys to values")
        return {}, key_lines, end + 1
    return {str(k): v for k, v in fm.items()}, key_lines, end + 1


def _split_sections(
    lines: list[str], start: int, out: _Collector
) -> tuple[str | None, list[_Section]]:
    title: str | None = None
    sections: list[_Section] = []
    in_fence = False
    for idx in range(start, len(lines)):
        raw = lines[idx]
        lineno = idx + 1
        stripped = raw.strip()
        if stripped.startswith("```"):
            in_fence = not in_fence
        if not in_fence and raw.startswith("# ") and not sections and title is None:
            title = raw[2:].strip()
            continue
        if not in_fence and raw.startswith("## "):
            sections.append(_Section(raw[3:].strip(), lineno))
            continue
        if sections:
            sections[-1].lines.append((lineno, raw))
        elif stripped and title is None:
            out.add(lineno, "expected the '# <Name>' title line before any text")
        elif stripped and title is not None:
            out.add(lineno, "text between the title and '## When to Apply' is not allowed")
    if title is None:
        out.add(start + 1, "missing the '# <Name>' title line")
    _check_order(sections, out, start + 1)
    return title, sections


def _check_order(sections: list[_Section], out: _Collector, fallback_line: int) -> None:
    seen = [s.title for s in sections]
    for s in sections:
        if s.title not in SECTIONS:
            out.add(
                s.line, f"unknown section '## {s.title}' (template sections: {', '.join(SECTIONS)})"
            )
        elif seen.count(s.title) > 1 and seen.index(s.title) != sections.index(s):
            out.add(s.line, f"section '## {s.title}' appears twice")
    known = [s for s in sections if s.title in SECTIONS]
    last_line = sections[-1].line if sections else fallback_line
    for expected in SECTIONS:
        if expected not in seen:
            out.add(last_line, f"missing section '## {expected}'")
    for prev, cur in itertools.pairwise(known):
        if SECTIONS.index(cur.title) < SECTIONS.index(prev.title):
            out.add(
                cur.line,
                f"section '## {cur.title}' is out of order: it must come before '## {prev.title}'",
            )


def _prose(section: _Section) -> str:
    return "\n".join(text for _, text in section.lines).strip()


def _bullets(section: _Section, out: _Collector) -> list[tuple[int, str]]:
    """Bullet items of a section (continuation lines joined); other text is a problem."""
    items: list[tuple[int, str]] = []
    for lineno, raw in section.lines:
        if not raw.strip():
            continue
        m = _BULLET_RE.match(raw)
        if m and not raw.startswith("  "):
            items.append((lineno, m.group(1).strip()))
        elif items and raw.startswith(("  ", "\t")):
            items[-1] = (items[-1][0], items[-1][1] + " " + raw.strip())
        else:
            out.add(
                lineno,
                f"'## {section.title}' takes a bullet list ('- ...'), found: {raw.strip()[:60]!r}",
            )
    return items


def _parse_when(section: _Section, out: _Collector) -> tuple[list[str], list[Trigger]]:
    contexts: list[str] = []
    triggers: list[Trigger] = []
    items = _bullets(section, out)
    for lineno, text in items:
        m = _CODE_LEAD_RE.match(text)
        if m and _LOOKS_LIKE_TRIGGER.search(m.group(1)):
            alt = _ALTERNATIVES_RE.match(text)
            exprs = [m.group(1)]
            note = m.group(2).strip()
            if alt:  # `A` or `B` [or `C`]: one condition, any of them firing it
                exprs = _CODE_RE.findall(alt.group(1))
                note = alt.group(2).strip()
            try:
                triggers += [
                    Trigger.parse(e, note=note if i == 0 else "").model_copy(
                        update={"alternative": i > 0}
                    )
                    for i, e in enumerate(exprs)
                ]
            except (ValueError, ValidationError) as exc:
                out.add(lineno, f"bad trigger: {_first_msg(exc)}")
        else:
            contexts.append(text)
    if not items:
        out.add(
            section.line, "'## When to Apply' is empty: state the context and the metric conditions"
        )
    elif not contexts:
        out.add(
            section.line,
            "'## When to Apply' states no context: add a bullet naming the kernels or "
            "situations it applies to (e.g. 'MLA decode', 'any online-softmax kernel')",
        )
    return contexts, triggers


# Front-matter lists that mark When to Apply conditions: the key, the Trigger flag it sets
# and an example for the error message.
TRIGGER_MARKS = {
    "room_to_act": ("room", '["ctas_per_sm >= 2"]'),
    "defining": ("defining", '["global_reduction_sectors > 0"]'),
}


def _mark_triggers(
    key: str, listed: Any, triggers: list[Trigger], line: int, out: _Collector
) -> list[Trigger]:
    """The triggers with the flag of front-matter list `key` (`room_to_act`, `defining`) set
    on those it lists (each an expression of a When to Apply condition, `metric op value`)."""
    flag, example = TRIGGER_MARKS[key]
    if not isinstance(listed, list) or not all(isinstance(r, str) for r in listed):
        out.add(line, f"{key}: a list of conditions, e.g. {example}")
        return triggers
    wanted: set[tuple[str, str, float]] = set()
    for text in listed:
        try:
            t = Trigger.parse(text)
        except (ValueError, ValidationError) as exc:
            out.add(line, f"{key}: bad condition {text!r}: {_first_msg(exc)}")
            continue
        k = (t.metric, t.op, t.value)
        if not any((u.metric, u.op, u.value) == k for u in triggers):
            out.add(line, f"{key}: `{t.expression}` is not a condition of When to Apply")
        wanted.add(k)
    return [
        t.model_copy(update={flag: True}) if (t.metric, t.op, t.value) in wanted else t
        for t in triggers
    ]


def _parse_metrics(section: _Section, out: _Collector) -> list[MetricEffect]:
    effects = []
    for lineno, text in _bullets(section, out):
        m = _CODE_LEAD_RE.match(text)
        if not m:
            out.add(
                lineno,
                "an Affected Metrics bullet must open with a metric name in backticks, e.g. - `dram_throughput_pct`: rises",
            )
            continue
        try:
            effects.append(MetricEffect(metric=m.group(1).strip(), note=m.group(2).strip()))
        except ValidationError as exc:
            out.add(lineno, _first_msg(exc))
    return effects


def _parse_code(section: _Section, out: _Collector) -> str:
    code: list[str] = []
    state = "before"
    for lineno, raw in section.lines:
        s = raw.strip()
        if state == "before":
            if s.startswith("```"):
                if s != "```python":
                    out.add(lineno, "the Implementation snippet must be a ```python fence")
                state = "in"
            elif s:
                out.add(lineno, "text outside the ```python fence in '## Implementation'")
        elif state == "in":
            if s == "```":
                state = "after"
            else:
                code.append(raw)
        elif s:
            out.add(lineno, "text after the ```python fence in '## Implementation'")
    if state == "before":
        out.add(section.line, "'## Implementation' needs a ```python code snippet")
    elif state == "in":
        out.add(section.line, "the ```python fence in '## Implementation' is not closed")
    return "\n".join(code).strip("\n")


def _parse_evidence(section: _Section, out: _Collector) -> list[EvidenceBlock]:
    blocks: list[EvidenceBlock] = []
    current: dict[str, Any] | None = None
    current_line = section.line
    header_seen = False

    def close() -> None:
        nonlocal current
        if current is None:
            return
        try:
            blocks.append(EvidenceBlock.model_validate(current))
        except ValidationError as exc:
            for err in exc.errors():
                loc = ".".join(str(p) for p in err["loc"]) or "evidence"
                msg = err["msg"].removeprefix("Value error, ")
                if err["type"] == "missing" and loc == "source":
                    msg = (
                        "evidence without a source: add a 'Source:' line naming where it comes from"
                    )
                elif loc == "rows":
                    msg = "evidence block has no table rows"
                out.add(current_line, f"Performance Evidence: {loc}: {msg}")
        current = None

    for lineno, raw in section.lines:
        s = raw.strip()
        if not s:
            continue
        kv = _KV_RE.match(s)
        if kv and not s.startswith("|"):
            key = kv.group("key").strip().lower()
            value = kv.group("value").strip()
            if key == "source type":
                close()
                current = {"source_type": value, "rows": []}
                current_line = lineno
                header_seen = False
                continue
            if current is None:
                out.add(lineno, "Performance Evidence must start with a 'Source type:' line")
                continue
            if key in PROVENANCE_KEYS:
                if key == "command":
                    value = value.strip("`")
                current[PROVENANCE_KEYS[key]] = value
                continue
            out.add(
                lineno,
                f"unknown evidence line '{kv.group('key')}:' (use Source type, Source, Device, Versions, Date, Command)",
            )
            continue
        if s.startswith("|"):
            if current is None:
                out.add(lineno, "evidence table without a 'Source type:' line above it")
                current = {"source_type": "", "rows": []}
                current_line = lineno
            cells = split_row(s)
            if not header_seen:
                if tuple(cells) != EVIDENCE_COLUMNS:
                    out.add(
                        lineno,
                        f"evidence table header must be | {' | '.join(EVIDENCE_COLUMNS)} |, found | {' | '.join(cells)} |",
                    )
                header_seen = True
                continue
            if is_separator(cells):
                continue
            if len(cells) != len(EVIDENCE_COLUMNS):
                out.add(
                    lineno, f"evidence row has {len(cells)} cells, expected {len(EVIDENCE_COLUMNS)}"
                )
                continue
            current["rows"].append(
                dict(zip(("config", "before", "after", "change"), cells, strict=True))
            )
            continue
        out.add(lineno, f"unexpected text in Performance Evidence: {s[:60]!r}")
    close()
    return blocks


def _parse_interactions(section: _Section, out: _Collector) -> list[Interaction]:
    result = []
    relations = ", ".join(r.value for r in Relation)
    for lineno, text in _bullets(section, out):
        m = _INTERACTION_RE.match(text)
        if not m:
            out.add(
                lineno,
                f"an interaction must read '- <relation> `<entry-name>`: note' with relation one of {relations}",
            )
            continue
        if m["rel"] not in {r.value for r in Relation}:
            out.add(lineno, f"unknown relation {m['rel']!r}; use one of {relations}")
            continue
        try:
            result.append(
                Interaction(relation=Relation(m["rel"]), target=m["target"], note=m["note"].strip())
            )
        except ValidationError as exc:
            out.add(lineno, _first_msg(exc))
    return result


def _first_msg(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        return str(err["msg"]).removeprefix("Value error, ")
    return str(exc)


# --------------------------------------------------------------------------- render


def _yaml_scalar(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_yaml_scalar(x) for x in v) + "]"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, dt.date):
        return v.isoformat()
    return str(v)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_entry(entry: Entry) -> str:
    """The canonical Markdown of an entry."""
    out: list[str] = ["---"]
    for key, value in entry.front_matter().items():
        out.append(f"{key}: {_yaml_scalar(value)}")
    for key, (flag, _) in TRIGGER_MARKS.items():
        marked = [t.expression for t in entry.triggers if getattr(t, flag)]
        if marked:
            out.append(f"{key}: [" + ", ".join(f'"{r}"' for r in marked) + "]")
    if entry.moves:
        out.append("moves:")
        for move in entry.moves:
            out += move.to_yaml_lines()
    out += ["---", "", f"# {entry.title}", "", "## When to Apply"]
    out += [f"- {c}" for c in entry.contexts]
    for group in trigger_groups(entry.triggers):
        shown = " or ".join(f"`{t.expression}`" for t in group)
        out.append(f"- {shown}" + (f": {group[0].note}" if group[0].note else ""))
    out += ["", "## Mechanism", entry.mechanism, "", "## Affected Metrics"]
    out += [f"- `{m.metric}`" + (f": {m.note}" if m.note else "") for m in entry.affected_metrics]
    out += [
        "",
        "## Implementation",
        "```python",
        entry.implementation,
        "```",
        "",
        "## Performance Evidence",
    ]
    for i, block in enumerate(entry.evidence):
        if i:
            out.append("")
        out.append(f"Source type: {block.source_type.value}")
        out.append(f"Source: {block.source}")
        for label, value in (
            ("Device", block.device),
            ("Versions", block.versions),
            ("Date", block.date),
            ("Command", f"`{block.command}`" if block.command else None),
        ):
            if value:
                out.append(f"{label}: {value}")
        out.append("| " + " | ".join(EVIDENCE_COLUMNS) + " |")
        out.append("|--------|--------|-------|--------|")
        for r in block.rows:
            out.append(
                f"| {_cell(r.config)} | {_cell(r.before)} | {_cell(r.after)} | {_cell(r.change)} |"
            )
    out += ["", "## Generalization", entry.generalization, "", "## Pitfalls"]
    out += [f"- {p}" for p in entry.pitfalls]
    out += ["", "## Interactions"]
    out += [
        f"- {i.relation.value} `{i.target}`" + (f": {i.note}" if i.note else "")
        for i in entry.interactions
    ]
    return "\n".join(out).rstrip() + "\n"


def scaffold(name: str, kind: str, language: str | None, today: dt.date | None = None) -> str:
    """A new entry file from the template, with placeholders a writer must replace.

    The scaffold parses, so `kbopt add` can check a half-written file, but lint flags the
    placeholders until they are filled in.
    """
    day = (today or dt.date.today()).isoformat()
    lang = f"language: {language}\n" if language else ""
    title = name.replace("-", " ").capitalize()
    return f"""---
name: {name}
kind: {kind}
{lang}applies_to: [any-kernel]
bottlenecks: [memory]
impact: medium
expected_gain_pct: 10
risk: low
status: proposed
created: {day}
updated: {day}
---

# {title}

## When to Apply
- TODO: the kernels or situations this applies to (e.g. MLA decode, any online-softmax kernel)
- `dram_throughput_pct < 60`: TODO replace with the metric condition that triggers it

## Mechanism
TODO: how and why it works.

## Affected Metrics
- `dram_throughput_pct`: TODO how it moves

## Implementation
```python
# TODO: a short, self-contained snippet
```

## Performance Evidence
Source type: external report
Source: TODO name the paper, repository file or vendor guide
| Config | Before | After | Change |
|--------|--------|-------|--------|
| TODO | TODO | TODO | TODO |

## Generalization
TODO: the device-agnostic takeaway.

## Pitfalls
- TODO: known failure modes

## Interactions
"""
