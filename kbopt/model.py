"""The typed knowledge-base entry.

One `Entry` is one Markdown file under `docs/knowledge/`.  Every field has exactly one
home in that file: the classification lives in the YAML front matter, everything a
reader reads (title, contexts, triggers, metrics, evidence, interactions) lives in
the template's sections, and `name` is the file stem.  `kbopt.template` moves
between the two representations.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kbopt.errors import KbError
from kbopt.moves import parse_operation, shown_op
from kbopt.vocab import (
    COMPARATORS,
    CONTEXTS,
    METRICS,
    OPERATORS,
    Bottleneck,
    Kind,
    Language,
    Level,
    Relation,
    Scope,
    SourceType,
    Status,
    metric_value_problem,
)

# Kebab-case: words of lowercase letters and digits joined by single dashes.  `\Z`, not
# `$`: `$` also matches before a final newline, and "name\n" is not a file name.
NAME_RE = re.compile(r"\A[a-z0-9]+(?:-[a-z0-9]+)*\Z")
NAME_MAX = 80
# Names whose file the knowledge tree keeps for the site (index.md, README.md), never an entry.
RESERVED_NAMES = frozenset({"index", "readme"})
# Entry dates: the span in which a GPU optimization can have been recorded.
DATE_RANGE = (dt.date(1990, 1, 1), dt.date(2100, 12, 31))
_DATE_RE = re.compile(r"\A\d{4}-\d{2}-\d{2}\Z")
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

_TRIGGER_RE = re.compile(
    r"^\s*(?P<metric>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<op>"
    + "|".join(re.escape(o) for o in OPERATORS)
    + r")\s*(?P<value>-?[0-9]+(?:\.[0-9]+)?)\s*$"
)


def name_problem(name: object) -> str | None:
    """Why `name` is not a plain kebab-case entry name (no paths), or None."""
    if not isinstance(name, str) or not NAME_RE.match(name) or len(name) > NAME_MAX:
        return (
            f"invalid entry name {name!r}: use lowercase letters, digits and single dashes "
            f"(kebab-case, 1-{NAME_MAX} characters, no slashes or dots)"
        )
    if name in RESERVED_NAMES:
        return f"invalid entry name {name!r}: {name}.md is kept for the site, not an entry"
    return None


def validate_name(name: str) -> str:
    """Refuse anything that is not a plain kebab-case entry name (no paths)."""
    problem = name_problem(name)
    if problem is not None:
        raise KbError(problem)
    return name


def strict_number(v: object) -> object:
    """A before-validator: numbers only (YAML `true` is not 1, the text "30" is not 30)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ValueError(f"{v!r} is not a number")
    if not math.isfinite(v):
        raise ValueError(f"{v!r} is not a finite number")
    return v


def strict_date(v: object) -> object:
    """A before-validator: a real calendar date written YYYY-MM-DD, within DATE_RANGE."""
    if isinstance(v, dt.datetime):
        raise ValueError(f"{v!r} is a date and time; write the date only (YYYY-MM-DD)")
    if isinstance(v, str):
        if not _DATE_RE.match(v):
            raise ValueError(f"{v!r} is not a date written YYYY-MM-DD")
        try:
            v = dt.date.fromisoformat(v)
        except ValueError:
            raise ValueError(f"{v!r} is not a real calendar date") from None
    if not isinstance(v, dt.date):
        raise ValueError(f"{v!r} is not a date written YYYY-MM-DD")
    lo, hi = DATE_RANGE
    if not lo <= v <= hi:
        raise ValueError(f"{v.isoformat()} is outside {lo.isoformat()}..{hi.isoformat()}")
    return v


def _one_line(what: str, v: str) -> str:
    if "\n" in v or "\r" in v:
        raise ValueError(f"{what} must be one line")
    return v


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False, validate_assignment=True)

    @field_validator("*")
    @classmethod
    def _no_control_chars(cls, v: Any) -> Any:
        # NUL, ESC and the like have no place in a Markdown entry (tab and newline do).
        for item in v if isinstance(v, list) else [v]:
            if isinstance(item, str) and _CONTROL_RE.search(item):
                raise ValueError("contains a control character (NUL, ESC...); remove it")
        return v


class Trigger(Strict):
    """A machine-checkable condition `metric op value` over the closed metric vocabulary."""

    metric: str
    op: str
    value: float
    note: str = ""
    # One condition with the trigger before it, either one firing it: written on one
    # bullet as `A` or `B` (alternative symptoms of one cause).  The note is the first's.
    alternative: bool = False
    # Room for the entry's move rather than a symptom of its problem (`registers_per_thread
    # <= 64`: each thread can hold more); listed in the front matter's `room_to_act`.
    room: bool = False
    # The problem itself rather than a symptom of it (`global_reduction_sectors > 0`: the
    # kernel issues global atomics at all); measured false, the entry cannot apply.  Listed
    # in the front matter's `defining`.
    defining: bool = False

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, v: str) -> str:
        if v not in METRICS:
            raise ValueError(f"unknown metric {v!r} (see `kbopt vocab`)")
        return v

    @field_validator("value", mode="before")
    @classmethod
    def _number(cls, v: object) -> object:
        return strict_number(v)

    @field_validator("note")
    @classmethod
    def _note(cls, v: str) -> str:
        return _one_line("a trigger's note", v)

    @model_validator(mode="after")
    def _in_range(self) -> Trigger:
        problem = metric_value_problem(self.metric, self.value)
        if problem is not None:
            raise ValueError(problem)
        return self

    @field_validator("op")
    @classmethod
    def _known_op(cls, v: str) -> str:
        if v not in OPERATORS:
            raise ValueError(f"unknown operator {v!r}; use one of {', '.join(OPERATORS)}")
        return v

    @classmethod
    def parse(cls, text: str, note: str = "") -> Trigger:
        m = _TRIGGER_RE.match(text)
        if not m:
            raise ValueError(f"trigger {text!r} is not `metric op number`")
        return cls(metric=m["metric"], op=m["op"], value=float(m["value"]), note=note)

    @property
    def expression(self) -> str:
        v = self.value
        shown = str(int(v)) if v == int(v) else repr(v)
        return f"{self.metric} {self.op} {shown}"

    def holds(self, metrics: Mapping[str, float]) -> bool | None:
        """True / False when the metric is known, None when the profile lacks it."""
        if self.metric not in metrics:
            return None
        return bool(COMPARATORS[self.op](float(metrics[self.metric]), self.value))


class MetricEffect(Strict):
    """One Affected Metrics bullet: a canonical metric and how it moves."""

    metric: str
    note: str = ""

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, v: str) -> str:
        if v not in METRICS:
            raise ValueError(f"unknown metric {v!r} (see `kbopt vocab`)")
        return v

    @field_validator("note")
    @classmethod
    def _note(cls, v: str) -> str:
        return _one_line("a metric's note", v)


class EvidenceRow(Strict):
    config: str
    before: str
    after: str
    change: str

    @field_validator("config", "before", "after", "change")
    @classmethod
    def _cell(cls, v: str) -> str:
        return _one_line("a table cell", v)

    @property
    def change_pct(self) -> float | None:
        """The Change column as a signed percentage, when it is one (`-42%`, `+1.5 %`)."""
        m = re.search(r"([+-−]?\s*[0-9]+(?:\.[0-9]+)?)\s*%", self.change)
        if not m:
            m2 = re.search(r"([0-9]+(?:\.[0-9]+)?)\s*[x×]", self.change)
            if m2:
                return (float(m2.group(1)) - 1.0) * 100.0
            return None
        return float(m.group(1).replace("−", "-").replace(" ", ""))


class EvidenceBlock(Strict):
    """A `Source type:` line, its provenance lines, and its table."""

    source_type: SourceType
    source: str = Field(min_length=1)
    device: str | None = None
    versions: str | None = None
    date: str | None = None
    command: str | None = None
    rows: list[EvidenceRow] = Field(min_length=1)

    @field_validator("source", "device", "versions", "date", "command")
    @classmethod
    def _line(cls, v: str | None) -> str | None:
        return None if v is None else _one_line("a provenance line", v)

    @field_validator("date")
    @classmethod
    def _real_date(cls, v: str | None) -> str | None:
        # Free text ("Dec 2023", "2023") is fine; a YYYY-MM-DD date must exist.
        for day in re.findall(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)", v or ""):
            try:
                dt.date.fromisoformat(day)
            except ValueError:
                raise ValueError(f"Date: {day} is not a real calendar date") from None
        return v

    @model_validator(mode="after")
    def _local_needs_command(self) -> EvidenceBlock:
        if self.source_type is SourceType.LOCAL_EXPERIMENT and not self.command:
            raise ValueError("a local experiment needs a `Command:` line that reproduces it")
        return self


class Interaction(Strict):
    relation: Relation
    target: str
    note: str = ""

    @field_validator("target")
    @classmethod
    def _target_name(cls, v: str) -> str:
        if name_problem(v) is not None:
            raise ValueError(f"interaction target {v!r} is not an entry name")
        return v

    @field_validator("note")
    @classmethod
    def _note(cls, v: str) -> str:
        return _one_line("an interaction's note", v)


class Entry(Strict):
    """One optimization or anti-pattern (the detail-file template, typed)."""

    name: str
    kind: Kind
    language: Language | None = None
    title: str = Field(min_length=3)
    applies_to: list[str] = Field(min_length=1)
    bottlenecks: list[Bottleneck] = Field(min_length=1)
    impact: Level
    expected_gain_pct: float = Field(ge=0, le=1000)
    risk: Level
    status: Status = Status.PROPOSED
    created: dt.date
    updated: dt.date
    contexts: list[str] = Field(default_factory=list)  # When to Apply prose bullets
    triggers: list[Trigger] = Field(default_factory=list)
    mechanism: str = ""
    affected_metrics: list[MetricEffect] = Field(default_factory=list)
    implementation: str = ""  # the code inside the python fence
    evidence: list[EvidenceBlock] = Field(default_factory=list)
    generalization: str = ""
    pitfalls: list[str] = Field(default_factory=list)
    interactions: list[Interaction] = Field(default_factory=list)
    # What the entry does to a kernel's declared knobs, by role (kbopt.moves); front matter.
    # On an anti-pattern they name the change it warns against: the cycle never applies them.
    moves: list[Move] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        problem = name_problem(v)
        if problem is not None:
            raise ValueError(problem)
        return v

    @field_validator("expected_gain_pct", mode="before")
    @classmethod
    def _gain(cls, v: object) -> object:
        return strict_number(v)

    @field_validator("created", "updated", mode="before")
    @classmethod
    def _date(cls, v: object) -> object:
        return strict_date(v)

    @field_validator("title")
    @classmethod
    def _title(cls, v: str) -> str:
        return _one_line("the title", v)

    @field_validator("contexts", "pitfalls")
    @classmethod
    def _bullets(cls, v: list[str]) -> list[str]:
        for item in v:
            _one_line("a bullet", item)
            if not item.strip():
                raise ValueError("a bullet is empty")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> Entry:
        if self.updated < self.created:
            raise ValueError(
                f"updated ({self.updated.isoformat()}) is before created "
                f"({self.created.isoformat()})"
            )
        if any(i.target == self.name for i in self.interactions):
            raise ValueError(f"interactions: an entry cannot interact with itself ({self.name!r})")
        return self

    @field_validator("applies_to")
    @classmethod
    def _contexts(cls, v: list[str]) -> list[str]:
        for c in v:
            if c not in CONTEXTS:
                raise ValueError(f"unknown context {c!r}; known: {', '.join(CONTEXTS)}")
        return v

    @property
    def scope(self) -> Scope:
        return Scope.SHARED if self.language is None else Scope.LANGUAGE

    @property
    def when_to_apply_summary(self) -> str:
        """One line for the catalog index: the first context, then the triggers."""
        parts = self.contexts[:1] + [t.expression for t in self.triggers]
        return "; ".join(parts)

    def relpath(self) -> str:
        """Path under the knowledge root that the folder layout prescribes for this entry."""
        return entry_relpath(self.kind, self.language, self.name)

    def front_matter(self) -> dict[str, Any]:
        fm: dict[str, Any] = {"name": self.name, "kind": self.kind.value}
        if self.language is not None:
            fm["language"] = self.language.value
        fm.update(
            applies_to=list(self.applies_to),
            bottlenecks=[b.value for b in self.bottlenecks],
            impact=self.impact.value,
            expected_gain_pct=_num(self.expected_gain_pct),
            risk=self.risk.value,
            status=self.status.value,
            created=self.created.isoformat(),
            updated=self.updated.isoformat(),
        )
        return fm

    def summary(self) -> dict[str, Any]:
        """The machine-readable row used by `list --json` and catalog.json."""
        return {
            "id": self.name,
            "title": self.title,
            "kind": self.kind.value,
            "scope": self.scope.value,
            "language": self.language.value if self.language else None,
            "path": "docs/knowledge/" + self.relpath(),
            "applies_to": list(self.applies_to),
            "bottlenecks": [b.value for b in self.bottlenecks],
            "impact": self.impact.value,
            "expected_gain_pct": _num(self.expected_gain_pct),
            "risk": self.risk.value,
            "status": self.status.value,
            "when_to_apply": self.when_to_apply_summary,
            "triggers": [t.expression for t in self.triggers],
            "metrics": [m.metric for m in self.affected_metrics],
            "interactions": [
                {"relation": i.relation.value, "target": i.target} for i in self.interactions
            ],
            "moves": [m.describe() for m in self.moves],
            "updated": self.updated.isoformat(),
        }

    def evidence_frame(self) -> Any:
        """Performance Evidence as a pandas DataFrame, one row per table row."""
        import pandas as pd

        records = []
        for block in self.evidence:
            for row in block.rows:
                records.append(
                    {
                        "entry": self.name,
                        "source_type": block.source_type.value,
                        "source": block.source,
                        "device": block.device,
                        "config": row.config,
                        "before": row.before,
                        "after": row.after,
                        "change": row.change,
                        "change_pct": row.change_pct,
                        "command": block.command,
                        "date": block.date,
                    }
                )
        return pd.DataFrame.from_records(
            records,
            columns=[
                "entry",
                "source_type",
                "source",
                "device",
                "config",
                "before",
                "after",
                "change",
                "change_pct",
                "command",
                "date",
            ],
        )


class Move(BaseModel):
    """How an optimization acts on a kernel's knobs, by role (see `kbopt.moves`)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    change: dict[str, Any] = Field(min_length=1)
    when: list[Trigger] = Field(default_factory=list)
    note: str = ""

    @field_validator("change")
    @classmethod
    def _ops(cls, v: dict[str, Any]) -> dict[str, Any]:
        for role, op in v.items():
            parse_operation(str(role), op)
        return {str(k): op for k, op in v.items()}

    @field_validator("when", mode="before")
    @classmethod
    def _conditions(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list):
            raise ValueError("when: a list of `metric op value` conditions")
        out = []
        for item in v:
            if isinstance(item, str):
                out.append(Trigger.parse(item))  # ValueError names the bad text
            else:
                out.append(item)
        return out

    @model_validator(mode="after")
    def _no_note_newlines(self) -> Move:
        if "\n" in self.note:
            raise ValueError("note: one line")
        return self

    def describe(self) -> str:
        ops = ", ".join(f"{role} {shown_op(op)}" for role, op in self.change.items())
        return ops + (f" when {', '.join(t.expression for t in self.when)}" if self.when else "")

    def to_yaml_lines(self) -> list[str]:
        """The canonical front-matter lines of this move (JSON strings are YAML)."""
        import json

        change = ", ".join(f"{k}: {json.dumps(v)}" for k, v in self.change.items())
        lines = [f"  - change: {{{change}}}"]
        if self.when:
            lines.append(
                "    when: [" + ", ".join(json.dumps(t.expression) for t in self.when) + "]"
            )
        if self.note:
            lines.append(f"    note: {json.dumps(self.note, ensure_ascii=False)}")
        return lines


Entry.model_rebuild()  # Entry.moves names Move, defined after it


def trigger_groups(triggers: Sequence[Trigger]) -> list[list[Trigger]]:
    """The conditions of a When to Apply list: each trigger with the alternatives that
    follow it (`A` or `B` on one bullet)."""
    groups: list[list[Trigger]] = []
    for t in triggers:
        if t.alternative and groups:
            groups[-1].append(t)
        else:
            groups.append([t])
    return groups


def entry_relpath(kind: Kind, language: Language | None, name: str) -> str:
    if language is None:
        return f"{kind.folder}/{name}.md"
    return f"languages/{language.value}/{kind.folder}/{name}.md"


def _num(v: float) -> float | int:
    return int(v) if float(v).is_integer() else v
