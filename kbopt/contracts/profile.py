"""The profiler -> orchestrator contract, typed.

Shape (sections after the title may be absent; this is also the render order)::

    ## Profile: mla_decode triton_v3 | b=32, s=1, t=4096     (the kernel spec's dims)
    ### Stages
    | Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |
    |-------|----------|-----|-------|------|------------|-----------|
    | decode | 412 us | 18% | 41% | 12% | Memory | 8 CTAs for 132 SMs |
    ### Metrics
    | Metric | Value |
    |--------|-------|
    | registers_per_thread | 168 |
    | ctas_per_sm | 0.24 |
    ### Bottleneck: Memory-bound
    Root cause: <two sentences>
    ### Top 3 Opportunities (ranked by how strongly the profile calls for each)
    1. [Split-KV decoding](docs/knowledge/optimizations/split-kv-decode.md) -- est. 50% gain -- trigger: ctas_per_sm=0.24
    ### vs Baseline
    | Metric | Previous | Current | Change |
    |--------|----------|---------|--------|
    | duration_us | 520 | 412 | -20.8% |

Everything is the seed's shape except **`### Metrics`**, kbopt's one extension: a
`Metric | Value` table of whatever else the profiler measured, keyed by the canonical
names of `kbopt.vocab.METRICS` (an Nsight Compute name from that table is accepted and
mapped to its canonical name).  A profile fresh from measurement has no Top 3
Opportunities yet (`kbopt.strategy.recommend` fills them); any `###` section may be
missing.  Unknown `###` sections are kept verbatim in `notes` and rendered last.

`Profile.metrics` is the flat `{canonical metric: float}` view that entry triggers are
evaluated against.  It is derived, in increasing priority, from:

1. the title's configuration, for keys that are themselves catalog metric names (the
   profiler writes the catalog metrics that a kernel's dimensions stand for, as its spec
   declares them (add_rmsnorm's `hidden` is `row_len`), into `### Metrics`, so the title
   needs no kernel-specific mapping here);
2. the Stages table: Duration -> `duration_us`, TC% -> `tensor_core_util_pct`,
   DRAM% -> `dram_throughput_pct`, Occ% -> `achieved_occupancy_pct`.  A stage named
   `total` / `overall` / `end-to-end` stands for the whole kernel; otherwise one stage
   is used as is, and several stages give the summed duration and duration-weighted
   percentages;
3. the `### Metrics` table, which overrides anything derived.

Numbers are rendered with at most three decimals, so `render(parse(text))` is a fixed
point and `parse(render(p)) == p` for profiles whose values have at most three decimals.
Parse errors are `KbError`s located as `path:line:`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kbopt.contracts.profile_text import (
    BASELINE_COLUMNS,
    COMMENT_RE,
    GAIN_RANGE,
    HEADING_RE,
    LINK_RE,
    METRIC_COLUMNS,
    NUMBER_CELL_RE,
    OPP_RE,
    SEPARATOR_CELL_RE,
    STAGE_COLUMNS,
    STAGE_METRICS,
    TITLE_RE,
    TOP_HEADING,
    TOTAL_STAGE_NAMES,
    TRIGGER_RE,
    canonical_metric,
    config_value_problem,
    flat_metrics,
    fmt_number,
    is_total_stage,
    parse_bottleneck,
    parse_duration_us,
    parse_metric_value,
    parse_pct,
    section_kind,
    strip_root_cause,
    table_columns_match,
)
from kbopt.errors import Problem, ProblemList
from kbopt.markdown import parse_table, render_table, split_row
from kbopt.vocab import METRICS, Bottleneck, metric_value_problem

# The text rules live in kbopt.contracts.profile_text (no pydantic); these names are
# this module's too.
__all__ = [
    "BASELINE_COLUMNS",
    "METRIC_COLUMNS",
    "STAGE_COLUMNS",
    "STAGE_METRICS",
    "TOP_HEADING",
    "TOTAL_STAGE_NAMES",
    "BaselineRow",
    "Opportunity",
    "Profile",
    "Stage",
    "canonical_metric",
    "config_value_problem",
    "fmt_number",
    "parse_bottleneck",
    "parse_duration_us",
    "parse_metric_value",
    "parse_pct",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Stage(_Strict):
    """One row of the Stages table; numeric cells are None when the profiler left them empty."""

    name: str = Field(min_length=1)
    duration_us: float | None = None
    tc_pct: float | None = None
    dram_pct: float | None = None
    occ_pct: float | None = None
    bottleneck: str = ""  # free text as the profiler wrote it ("Memory", "Latency (launch)")
    key_issue: str = ""

    @field_validator("duration_us")
    @classmethod
    def _duration(cls, v: float | None) -> float | None:
        if v is not None and (not math.isfinite(v) or v < 0):
            raise ValueError(f"duration {v!r} must be a finite number of microseconds >= 0")
        return v

    @field_validator("tc_pct", "dram_pct", "occ_pct")
    @classmethod
    def _pct(cls, v: float | None) -> float | None:
        if v is not None and not (math.isfinite(v) and 0 <= v <= 100):
            raise ValueError(f"percentage {v!r} is outside 0..100")
        return v

    @property
    def is_total(self) -> bool:
        return is_total_stage(self.name)


class Opportunity(_Strict):
    """One Top 3 item: `name -- est. X% gain -- trigger: metric=value`."""

    name: str = Field(min_length=1)
    link: str | None = None  # path of the knowledge-base entry, rendered as a Markdown link
    gain_pct: float
    gain_pct_max: float | None = None  # upper bound when the estimate is a range "20-40%"
    trigger: str = ""  # `metric=value` as observed in this profile

    @field_validator("gain_pct", "gain_pct_max")
    @classmethod
    def _finite_gain(cls, v: float | None) -> float | None:
        if v is not None and not (math.isfinite(v) and GAIN_RANGE[0] <= v <= GAIN_RANGE[1]):
            raise ValueError(f"estimated gain {v!r}% is not a plausible percentage")
        return v

    @property
    def trigger_metric(self) -> str | None:
        m = TRIGGER_RE.match(self.trigger)
        return m["metric"] if m else None

    @property
    def trigger_value(self) -> float | None:
        m = TRIGGER_RE.match(self.trigger)
        return float(m["value"]) if m else None

    def render(self, number: int) -> str:
        name = f"[{self.name}]({self.link})" if self.link else self.name
        gain = fmt_number(self.gain_pct)
        if self.gain_pct_max is not None:
            gain += "-" + fmt_number(self.gain_pct_max)
        line = f"{number}. {name} -- est. {gain}% gain"
        if self.trigger:
            line += f" -- trigger: {self.trigger}"
        return line


class BaselineRow(_Strict):
    """One row of the vs Baseline table, cells kept as written (units vary by metric)."""

    metric: str
    previous: str
    current: str
    change: str


class Profile(_Strict):
    """The profiler's compact bottleneck analysis of one kernel version at one configuration."""

    kernel: str = Field(min_length=1)
    version: str = ""
    config: dict[str, float] = Field(default_factory=dict)  # the kernel's dims, key=value
    stages: list[Stage] = Field(default_factory=list)
    measured: dict[str, float] = Field(default_factory=dict)  # the `### Metrics` extension
    bottleneck: Bottleneck | None = None
    root_cause: str = ""
    opportunities: list[Opportunity] = Field(default_factory=list)
    baseline: list[BaselineRow] = Field(default_factory=list)
    notes: dict[str, str] = Field(default_factory=dict)  # unknown `###` sections, verbatim

    @field_validator("measured")
    @classmethod
    def _canonical_metrics(cls, v: dict[str, float]) -> dict[str, float]:
        unknown = [k for k in v if k not in METRICS]
        if unknown:
            raise ValueError(f"unknown metric(s) {', '.join(unknown)} (see `kbopt vocab`)")
        for metric, value in v.items():
            problem = metric_value_problem(metric, value)
            if problem is not None:
                raise ValueError(problem)
        return v

    @field_validator("config")
    @classmethod
    def _finite_config(cls, v: dict[str, float]) -> dict[str, float]:
        for key, value in v.items():
            problem = config_value_problem(key, value)
            if problem is not None:
                raise ValueError(problem)
        return v

    # ------------------------------------------------------------------ views

    @property
    def metrics(self) -> dict[str, float]:
        """Flat canonical metrics: title config < stages < `### Metrics` (module docstring),
        with the idle share of the waves derived when absent (`flat_metrics`)."""
        return flat_metrics(self.config, self.stages, self.measured)

    @property
    def key_issues(self) -> list[str]:
        return [s.key_issue for s in self.stages if s.key_issue]

    def text_for_search(self) -> str:
        """Root cause, key issues and the kernel context, as one query text for relevance."""
        parts = [self.root_cause, *self.key_issues, self.kernel.replace("_", " ")]
        parts += [s.name for s in self.stages if not s.is_total]
        if self.bottleneck is not None:
            parts.append(f"{self.bottleneck.value}-bound")
        return " ".join(p for p in parts if p)

    # ------------------------------------------------------------------ render / parse

    def render(self) -> str:
        title = f"## Profile: {self.kernel}"
        if self.version:
            title += f" {self.version}"
        if self.config:
            title += " | " + ", ".join(f"{k}={fmt_number(v)}" for k, v in self.config.items())
        out = [title]
        if self.stages:
            out += [
                "### Stages",
                render_table(STAGE_COLUMNS, [_stage_cells(s) for s in self.stages]),
            ]
        if self.measured:
            rows = [[k, fmt_number(v)] for k, v in self.measured.items()]
            out += ["### Metrics", render_table(METRIC_COLUMNS, rows)]
        if self.bottleneck is not None:
            out.append(f"### Bottleneck: {self.bottleneck.value.capitalize()}-bound")
            if self.root_cause:
                out.append(f"Root cause: {self.root_cause}")
        if self.opportunities:
            out.append(f"### {TOP_HEADING}")
            out += [o.render(i) for i, o in enumerate(self.opportunities, 1)]
        if self.baseline:
            rows = [[r.metric, r.previous, r.current, r.change] for r in self.baseline]
            out += ["", "### vs Baseline", render_table(BASELINE_COLUMNS, rows)]
        for heading, body in self.notes.items():
            out.append(f"### {heading}")
            if body:
                out.append(body)
        return "\n".join(out) + "\n"

    @classmethod
    def parse(cls, text: str, path: str = "<profile>") -> Profile:
        """Parse the contract; raise `ProblemList` with every problem as `path:line:`."""
        return _Parser(text, path).parse()

    def with_opportunities(self, opportunities: Iterable[Opportunity]) -> Profile:
        """A copy whose Top 3 Opportunities are the first three of `opportunities`."""
        copy = self.model_copy(deep=True)
        copy.opportunities = list(opportunities)[:3]
        return copy


# ---------------------------------------------------------------------- helpers


def _stage_cells(s: Stage) -> list[str]:
    def pct(v: float | None) -> str:
        return "-" if v is None else f"{fmt_number(v)}%"

    dur = "-" if s.duration_us is None else f"{fmt_number(s.duration_us)} us"
    return [s.name, dur, pct(s.tc_pct), pct(s.dram_pct), pct(s.occ_pct), s.bottleneck, s.key_issue]


class _Parser:
    def __init__(self, text: str, path: str):
        self.lines = text.splitlines()
        self.path = path
        self.problems: list[Problem] = []

    def add(self, line: int, message: str) -> None:
        self.problems.append(Problem(message, self.path, line))

    def parse(self) -> Profile:
        # Blank lines and one-line HTML comments (provenance: device, date, command) may
        # come before the title.
        start = next(
            (i for i, ln in enumerate(self.lines) if ln.strip() and not COMMENT_RE.match(ln)),
            None,
        )
        if start is None and not any(ln.strip() for ln in self.lines):
            self.add(
                1, "the profile is empty: `kbopt profile` writes one (see `kbopt profile --help`)"
            )
            raise ProblemList(self.problems)
        if start is None or not TITLE_RE.match(self.lines[start].strip()):
            self.add(
                (start or 0) + 1,
                "a profile starts with `## Profile: <kernel> <version> | dim=X, dim=X` "
                "(e.g. `## Profile: add_rmsnorm triton_v2 | rows=8192, hidden=4096`)",
            )
            raise ProblemList(self.problems)
        data: dict[str, object] = {}
        self._title(start, data)
        seen: dict[str, int] = {}
        for heading, lineno, body in self._sections(start + 1):
            kind = section_kind(heading)
            if kind in seen:  # the second would silently replace the first
                self.add(
                    lineno, f"section `### {heading}` appears twice (first on line {seen[kind]})"
                )
                continue
            seen[kind] = lineno
            self._section(heading, lineno, body, data)
        if self.problems:
            raise ProblemList(self.problems)
        try:
            return Profile.model_validate(data)
        except ValidationError as exc:
            for err in exc.errors():
                where = ".".join(str(p) for p in err["loc"])
                msg = str(err["msg"]).removeprefix("Value error, ")
                self.add(start + 1, f"invalid profile: {where}: {msg}")
            raise ProblemList(self.problems) from None

    def _title(self, index: int, data: dict[str, object]) -> None:
        m = TITLE_RE.match(self.lines[index].strip())
        assert m is not None
        head, _, conf = m["body"].partition("|")
        words = [w.strip("[]") for w in head.split()]
        if not words:
            self.add(index + 1, "the title names no kernel: `## Profile: <kernel> <version> | ...`")
            return
        data["kernel"] = words[0]
        data["version"] = " ".join(words[1:])
        config: dict[str, float] = {}
        for part in filter(None, (p.strip().strip("[]") for p in conf.split(","))):
            key, eq, value = (x.strip() for x in part.partition("="))
            m = NUMBER_CELL_RE.fullmatch(value)
            if not eq or not key or m is None or m["unit"] or "," in value:
                self.add(
                    index + 1,
                    f"configuration item {part!r} is not `dim=number` (rows=8192, hidden=4096)",
                )
                continue
            if key in config:
                self.add(index + 1, f"dimension {key!r} is given twice")
                continue
            number = float(m["num"])
            problem = config_value_problem(key, number)
            if problem is not None:
                self.add(index + 1, f"configuration: {problem}")
                continue
            config[key] = number
        data["config"] = config

    def _sections(self, start: int) -> list[tuple[str, int, list[tuple[int, str]]]]:
        sections: list[tuple[str, int, list[tuple[int, str]]]] = []
        for i in range(start, len(self.lines)):
            line = self.lines[i]
            m = HEADING_RE.match(line.strip())
            if m:
                sections.append((m["title"], i + 1, []))
            elif line.strip().startswith("## "):
                self.add(
                    i + 1, f"unexpected level-2 heading {line.strip()!r}: one profile per document"
                )
            elif sections:
                sections[-1][2].append((i + 1, line))
            elif line.strip():
                self.add(i + 1, "text before the first `###` section")
        return sections

    def _section(
        self, heading: str, lineno: int, body: list[tuple[int, str]], data: dict[str, object]
    ) -> None:
        kind = section_kind(heading)
        if kind == "stages":
            data["stages"] = self._stages(lineno, body)
        elif kind == "metrics":
            data["measured"] = self._metrics(lineno, body)
        elif kind == "bottleneck":
            self._bottleneck(heading, lineno, body, data)
        elif kind == "opportunities":
            data["opportunities"] = self._opportunities(body)
        elif kind == "baseline":
            data["baseline"] = self._baseline(lineno, body)
        else:
            notes = data.setdefault("notes", {})
            assert isinstance(notes, dict)
            notes[heading] = "\n".join(t for _, t in body).strip()

    def _table(
        self, lineno: int, body: list[tuple[int, str]], columns: tuple[str, ...], what: str
    ) -> list[tuple[int, list[str]]]:
        rows = [(n, t) for n, t in body if t.strip().startswith("|")]
        for n, t in body:
            if t.strip() and not t.strip().startswith("|"):
                self.add(n, f"unexpected text in the {what} section (only its table belongs here)")
        if not rows:
            self.add(lineno, f"the {what} section has no table")
            return []
        header, _ = parse_table([rows[0][1]])
        if not table_columns_match(header, columns):
            self.add(rows[0][0], f"{what} columns must be: {' | '.join(columns)}")
            return []
        out = []
        body_rows = 0
        for n, t in rows[1:]:
            cells = split_row(t)
            if all(SEPARATOR_CELL_RE.fullmatch(c) for c in cells):
                continue
            body_rows += 1
            if len(cells) != len(columns):
                self.add(n, f"{what} row has {len(cells)} cells, expected {len(columns)}")
                continue
            out.append((n, cells))
        if not body_rows:
            # A header alone is a table cut short (a truncated file, an unfinished
            # profiler): ranking it as if measured would hide that.
            self.add(rows[0][0], f"the {what} table has no rows")
        return out

    def _stages(self, lineno: int, body: list[tuple[int, str]]) -> list[Stage]:
        stages = []
        seen: dict[str, int] = {}
        for n, cells in self._table(lineno, body, STAGE_COLUMNS, "Stages"):
            name = cells[0].strip().lower()
            if name in seen:
                self.add(n, f"stage {cells[0]!r} is listed twice (first on line {seen[name]})")
                continue
            seen[name] = n
            try:
                stages.append(
                    Stage(
                        name=cells[0],
                        duration_us=parse_duration_us(cells[1]),
                        tc_pct=parse_pct(cells[2]),
                        dram_pct=parse_pct(cells[3]),
                        occ_pct=parse_pct(cells[4]),
                        bottleneck=cells[5],
                        key_issue=cells[6],
                    )
                )
            except ValueError as exc:
                self.add(n, _clean(exc))
        return stages

    def _metrics(self, lineno: int, body: list[tuple[int, str]]) -> dict[str, float]:
        out: dict[str, float] = {}
        first: dict[str, int] = {}
        for n, (name, value) in self._table(lineno, body, METRIC_COLUMNS, "Metrics"):
            metric = canonical_metric(name)
            if metric is None:
                self.add(n, f"unknown metric {name!r} (use a name from `kbopt vocab`)")
                continue
            if metric in first:
                self.add(n, f"metric {metric} is listed twice (first on line {first[metric]})")
                continue
            first[metric] = n
            try:
                out[metric] = parse_metric_value(metric, value)
            except ValueError as exc:
                self.add(n, str(exc))
        return out

    def _bottleneck(
        self, heading: str, lineno: int, body: list[tuple[int, str]], data: dict[str, object]
    ) -> None:
        _, _, word = heading.partition(":")
        cls = parse_bottleneck(word)
        if cls is None:
            self.add(
                lineno, f"bottleneck {word.strip()!r} is not Memory-, Compute- or Latency-bound"
            )
        else:
            data["bottleneck"] = cls
        text = " ".join(t.strip() for _, t in body if t.strip())
        text = strip_root_cause(text)
        data["root_cause"] = text

    def _opportunities(self, body: list[tuple[int, str]]) -> list[Opportunity]:
        out = []
        for n, t in body:
            if not t.strip():
                continue
            m = OPP_RE.match(t)
            if not m:
                self.add(
                    n, "an opportunity reads `1. <name> -- est. X% gain -- trigger: metric=value`"
                )
                continue
            name, link = m["name"].strip(), None
            lm = LINK_RE.match(name)
            if lm:
                name, link = lm["text"], lm["link"]
            try:
                out.append(
                    Opportunity(
                        name=name.strip("[]"),
                        link=link,
                        gain_pct=float(m["lo"]),
                        gain_pct_max=float(m["hi"]) if m["hi"] else None,
                        trigger=(m["trigger"] or "").strip().strip("[]`"),
                    )
                )
            except ValidationError as exc:
                self.add(n, _clean_validation(exc))
        return out

    def _baseline(self, lineno: int, body: list[tuple[int, str]]) -> list[BaselineRow]:
        return [
            BaselineRow(metric=c[0], previous=c[1], current=c[2], change=c[3])
            for _, c in self._table(lineno, body, BASELINE_COLUMNS, "vs Baseline")
        ]


def _clean_validation(exc: ValidationError) -> str:
    err = exc.errors()[0]
    return str(err["msg"]).removeprefix("Value error, ")


def _clean(exc: Exception) -> str:
    """The first line of an error (pydantic's messages run over several lines)."""
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
