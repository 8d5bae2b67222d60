"""The orchestrator's two output formats (Optimization Applied, Optimization Summary), typed.

"Optimization Applied" (one optimization, user-specified mode)::

    ## Optimization Applied: <optimization_name>

    ### Prerequisites Checked
    - [x] Code compatibility verified
    - [x] Hardware requirements met

    ### Implementation
    - Specialist: <specialist_name>
    - Changes: <brief description>

    ### Validation
    | Metric | Before | After | Change |
    |--------|--------|-------|--------|
    | Throughput | X GB/s | Y GB/s | +Z% |
    | Latency | X ms | Y ms | -Z% |

    ### Result
    SUCCESS: Achieved X% improvement

"Optimization Summary" (several optimizations, autopilot mode)::

    ## Optimization Summary

    **Goal**: <target metric and value>
    **Starting Point**: <baseline metrics>
    **Result**: <final metrics, goal achieved/not achieved>

    ### Optimizations Applied (in order)

    1. **<Optimization 1>**
       - Impact: X ms --> Y ms (-Z%)
       - Status: Applied

    ### Cumulative Results
    | Metric | Baseline | Final | Total Change |
    |--------|----------|-------|--------------|
    | Throughput | X GB/s | Y GB/s | +Z% |
    | Latency | X ms | Y ms | -Z% |
    | SOL% | X% | Y% | +Z points |

    ### Remaining Opportunities
    - <optimization not yet tried>

The source shows only `SUCCESS: ...` as a result line; a rolled-back change reads
`ROLLED BACK: <why>` and a change that could not be made `FAILED: <why>`.  A step's extra
sub-bullets after Status (`- Version: ...`) are kept in `details`.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from kbopt.contracts._sections import (
    BULLET_RE,
    NUMBERED_RE,
    Collector,
    Section,
    find,
    items,
    require,
    split_document,
    table_rows,
)
from kbopt.markdown import render_table

APPLIED_TITLE_RE = re.compile(r"^##\s+Optimization Applied:\s*(?P<name>\S.*?)\s*$")
SUMMARY_TITLE_RE = re.compile(r"^##\s+Optimization Summary\s*$")
VALIDATION_COLUMNS = ("Metric", "Before", "After", "Change")
CUMULATIVE_COLUMNS = ("Metric", "Baseline", "Final", "Total Change")
_CHECK_RE = re.compile(r"^\[(?P<mark>[ xX])\]\s+(?P<text>\S.*)$")
_RESULT_RE = re.compile(r"^(?P<outcome>SUCCESS|ROLLED BACK|FAILED):\s*(?P<detail>.*)$")
_STEP_NAME_RE = re.compile(r"^\*\*(?P<name>.+?)\*\*\s*$")
_FIELD_RE = re.compile(r"^\*\*(?P<key>[^*]+)\*\*:\s*(?P<value>.*)$")
M = TypeVar("M", bound=BaseModel)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Outcome(StrEnum):
    SUCCESS = "SUCCESS"
    ROLLED_BACK = "ROLLED BACK"
    FAILED = "FAILED"


class StepStatus(StrEnum):
    APPLIED = "Applied"
    ROLLED_BACK = "Rolled back"


class Check(_Strict):
    done: bool
    text: str = Field(min_length=1)


class MetricRow(_Strict):
    """A row of a before/after table; cells as written (units differ by metric)."""

    metric: str
    before: str
    after: str
    change: str


class OptimizationApplied(_Strict):
    name: str = Field(min_length=1)
    # Checked, never assumed: the cycle fills these from what it ran and measured
    # (kbopt.workflow.prerequisites); an unticked box says what was not met or not checked.
    prerequisites: list[Check] = Field(min_length=1)
    specialist: str = Field(min_length=1)
    changes: str = Field(min_length=1)
    validation: list[MetricRow] = Field(default_factory=list)
    outcome: Outcome
    outcome_detail: str = ""

    def render(self) -> str:
        out = [
            f"## Optimization Applied: {self.name}",
            "",
            "### Prerequisites Checked",
            *[f"- [{'x' if c.done else ' '}] {c.text}" for c in self.prerequisites],
            "",
            "### Implementation",
            f"- Specialist: {self.specialist}",
            f"- Changes: {self.changes}",
            "",
            "### Validation",
            render_table(
                VALIDATION_COLUMNS,
                [[r.metric, r.before, r.after, r.change] for r in self.validation],
            ),
            "",
            "### Result",
            f"{self.outcome.value}: {self.outcome_detail}".rstrip(),
        ]
        return "\n".join(out) + "\n"

    @classmethod
    def parse(cls, text: str, path: str = "<optimization-applied>") -> OptimizationApplied:
        errors = Collector(path)
        m, line, sections = split_document(
            text, APPLIED_TITLE_RE, "## Optimization Applied: <optimization_name>", errors
        )
        data: dict[str, object] = {"name": m["name"]}
        _no_unknown(
            sections,
            {"prerequisites checked", "implementation", "validation", "result"},
            errors,
            "an Optimization Applied report",
        )
        pre = require(sections, "Prerequisites Checked", errors, line, "`- [x] ...` items")
        if pre is not None:
            checks = []
            for n, t in items(pre, errors, "Prerequisites Checked", numbered=False):
                cm = _CHECK_RE.match(t)
                if cm is None:
                    errors.add(n, "a prerequisite reads `- [x] <what was checked>`")
                    continue
                checks.append(Check(done=cm["mark"] != " ", text=cm["text"]))
            data["prerequisites"] = checks
        impl = require(sections, "Implementation", errors, line, "Specialist and Changes")
        if impl is not None:
            fields = _key_values(impl, errors, "Implementation")
            for key in ("specialist", "changes"):
                if key not in fields:
                    errors.add(impl.line, f"Implementation needs a `- {key.capitalize()}:` line")
                else:
                    data[key] = fields[key]
        val = require(sections, "Validation", errors, line, "a Metric/Before/After/Change table")
        if val is not None:
            data["validation"] = [
                MetricRow(metric=c[0], before=c[1], after=c[2], change=c[3])
                for _, c in table_rows(val, VALIDATION_COLUMNS, errors, "Validation")
            ]
        res = require(sections, "Result", errors, line, "SUCCESS: ...")
        if res is not None:
            body = " ".join(t.strip() for _, t in res.nonblank())
            rm = _RESULT_RE.match(body)
            if rm is None:
                where = res.nonblank()[0][0] if res.nonblank() else res.line
                errors.add(
                    where, "the result reads `SUCCESS: ...`, `ROLLED BACK: ...` or `FAILED: ...`"
                )
            else:
                data.update(outcome=Outcome(rm["outcome"]), outcome_detail=rm["detail"].strip())
        return _validate(cls, data, errors, line)


class SummaryStep(_Strict):
    name: str = Field(min_length=1)
    impact: str = Field(min_length=1)  # "412 us --> 298 us (-27.7%)" or "Regression detected"
    status: StepStatus
    details: list[str] = Field(default_factory=list)

    def render(self, number: int) -> str:
        lines = [
            f"{number}. **{self.name}**",
            f"   - Impact: {self.impact}",
            f"   - Status: {self.status.value}",
            *[f"   - {d}" for d in self.details],
        ]
        return "\n".join(lines)


class OptimizationSummary(_Strict):
    goal: str = Field(min_length=1)
    starting_point: str = Field(min_length=1)
    result: str = Field(min_length=1)
    steps: list[SummaryStep] = Field(default_factory=list)
    cumulative: list[MetricRow] = Field(default_factory=list)  # before = Baseline, after = Final
    remaining: list[str] = Field(default_factory=list)

    def render(self) -> str:
        out = [
            "## Optimization Summary",
            "",
            f"**Goal**: {self.goal}",
            f"**Starting Point**: {self.starting_point}",
            f"**Result**: {self.result}",
            "",
            "### Optimizations Applied (in order)",
            "",
        ]
        for i, step in enumerate(self.steps, 1):
            out += [step.render(i), ""]
        out += [
            "### Cumulative Results",
            render_table(
                CUMULATIVE_COLUMNS,
                [[r.metric, r.before, r.after, r.change] for r in self.cumulative],
            ),
            "",
            "### Remaining Opportunities",
            *[f"- {r}" for r in self.remaining],
        ]
        return "\n".join(out) + "\n"

    @classmethod
    def parse(cls, text: str, path: str = "<optimization-summary>") -> OptimizationSummary:
        errors = Collector(path)
        _, line, sections = split_document(
            text, SUMMARY_TITLE_RE, "## Optimization Summary", errors
        )
        data: dict[str, object] = {}
        _no_unknown(
            sections,
            {
                "",
                "optimizations applied (in order)",
                "cumulative results",
                "remaining opportunities",
            },
            errors,
            "an Optimization Summary",
        )
        head = find(sections, "")
        fields: dict[str, str] = {}
        if head is not None:
            for n, t in head.nonblank():
                fm = _FIELD_RE.match(t.strip())
                if fm is None:
                    errors.add(
                        n,
                        "the summary opens with `**Goal**:`, `**Starting Point**:`, `**Result**:`",
                    )
                    continue
                fields[fm["key"].strip().lower()] = fm["value"].strip()
        for key, attr in (
            ("goal", "goal"),
            ("starting point", "starting_point"),
            ("result", "result"),
        ):
            if key not in fields:
                errors.add(line, f"missing `**{key.title()}**:` line")
            else:
                data[attr] = fields[key]
        steps_sec = require(
            sections, "Optimizations Applied (in order)", errors, line, "numbered steps"
        )
        if steps_sec is not None:
            data["steps"] = _steps(steps_sec, errors)
        cum = require(
            sections, "Cumulative Results", errors, line, "Metric/Baseline/Final/Total Change"
        )
        if cum is not None:
            data["cumulative"] = [
                MetricRow(metric=c[0], before=c[1], after=c[2], change=c[3])
                for _, c in table_rows(cum, CUMULATIVE_COLUMNS, errors, "Cumulative Results")
            ]
        rem = find(sections, "Remaining Opportunities")
        if rem is not None:
            data["remaining"] = [
                t for _, t in items(rem, errors, "Remaining Opportunities", numbered=False)
            ]
        return _validate(cls, data, errors, line)


def _steps(section: Section, errors: Collector) -> list[SummaryStep]:
    steps: list[dict[str, object]] = []
    for n, t in section.nonblank():
        nm = NUMBERED_RE.match(t)
        bm = BULLET_RE.match(t)
        if nm is not None and not t.startswith(" "):
            sm = _STEP_NAME_RE.match(nm["text"].strip())
            if sm is None:
                errors.add(n, "a step reads `1. **<optimization>**`")
                continue
            steps.append({"name": sm["name"], "details": [], "_line": n})
        elif bm is not None and steps:
            key, sep, value = bm["text"].partition(":")
            low = key.strip().lower()
            if sep and low == "impact":
                steps[-1]["impact"] = value.strip()
            elif sep and low == "status":
                try:
                    steps[-1]["status"] = StepStatus(value.strip())
                except ValueError:
                    errors.add(
                        n, f"status {value.strip()!r} is neither `Applied` nor `Rolled back`"
                    )
            else:
                details = steps[-1]["details"]
                assert isinstance(details, list)
                details.append(bm["text"].strip())
        else:
            errors.add(n, f"unexpected line in the steps: {t.strip()!r}")
    out = []
    for s in steps:
        at = s.pop("_line")
        assert isinstance(at, int)
        if "impact" not in s or "status" not in s:
            errors.add(at, "a step needs `- Impact:` and `- Status:` lines")
            continue
        out.append(SummaryStep.model_validate(s))
    return out


def _key_values(section: Section, errors: Collector, what: str) -> dict[str, str]:
    out = {}
    for n, t in items(section, errors, what, numbered=False):
        key, sep, value = t.partition(":")
        if not sep:
            errors.add(n, f"{what}: expected `- Key: value`")
            continue
        out[key.strip().lower()] = value.strip()
    return out


def _no_unknown(sections: list[Section], known: set[str], errors: Collector, what: str) -> None:
    for s in sections:
        if s.title.lower() not in known:
            errors.add(s.line, f"unknown section {s.title!r} in {what}")


def _validate(cls: type[M], data: dict[str, object], errors: Collector, line: int) -> M:
    errors.raise_if_any()
    try:
        return cls.model_validate(data)
    except ValueError as exc:
        errors.add(line, f"invalid report: {str(exc).splitlines()[0]}")
        errors.raise_if_any()
        raise


def pct_change(before: float, after: float) -> str:
    """`-27.7%`: the signed change from `before` to `after`."""
    if before == 0:
        return "n/a"
    return f"{(after - before) / before * 100:+.1f}%"


def impact_text(before_us: float, after_us: float) -> str:
    """`412.0 us --> 298.3 us (-27.6%)`, a report's Impact line."""
    return f"{before_us:.1f} us --> {after_us:.1f} us ({pct_change(before_us, after_us)})"
