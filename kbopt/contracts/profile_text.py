"""The profile contract's text rules, with the standard library only.

`kbopt.contracts.profile` (the typed, pydantic `Profile`) parses and renders with these
rules: how a number, a duration, a percentage or a bottleneck class is written, which
metric names are canonical, how the Stages table becomes whole-kernel metrics.  They live
here so that a reader that must not load pydantic can use the very same rules:
`read_facts` reads a profile into `ProfileFacts` (what strategy selection needs) for the
quick path of `kbopt recommend` (`kbopt.cli.quick`).

`read_facts` never explains a problem: on anything the full parser would report (or
anything it is not sure the full parser accepts) it returns None, and the caller goes the
full way, which reports it.  Tests check that every profile it accepts is accepted by
`Profile.parse` with the same facts.
"""

from __future__ import annotations

import math
import re
from typing import Any

from kbopt.markdown import split_row
from kbopt.vocab import METRICS, Bottleneck, metric_value_problem
from kbopt.waves import wave_idle_pct

STAGE_COLUMNS = ("Stage", "Duration", "TC%", "DRAM%", "Occ%", "Bottleneck", "Key Issue")
METRIC_COLUMNS = ("Metric", "Value")
BASELINE_COLUMNS = ("Metric", "Previous", "Current", "Change")
TOP_HEADING = "Top 3 Opportunities (ranked by how strongly the profile calls for each)"

# Stage columns -> the canonical metric names they stand for.
STAGE_METRICS = {
    "duration_us": "duration_us",
    "tc_pct": "tensor_core_util_pct",
    "dram_pct": "dram_throughput_pct",
    "occ_pct": "achieved_occupancy_pct",
}
TOTAL_STAGE_NAMES = {"total", "overall", "end-to-end", "whole kernel", "all"}

NCU_TO_CANONICAL = {m.ncu: m.name for m in METRICS.values() if m.ncu}
COMMENT_RE = re.compile(r"^\s*<!--.*-->\s*$")
TITLE_RE = re.compile(r"^##\s+Profile:\s*(?P<body>.*)$")
HEADING_RE = re.compile(r"^###\s+(?P<title>.+?)\s*$")
# A whole cell: a number (thousands grouped by commas allowed: 1,024) and an optional
# unit.  `0,24` (a decimal comma) and `12abc` are not numbers.
NUMBER_CELL_RE = re.compile(
    r"(?P<num>[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+)"
    r"\s*(?P<unit>%|[A-Za-zµμ/]+)?"
)
OPP_RE = re.compile(
    r"^\s*(?P<num>\d+)[.)]\s+(?P<name>.+?)\s+(?:--|—|–)\s+est(?:imated|\.)?\s*"
    r"(?:~|≈|about\s+|up\s+to\s+)?"
    r"(?P<lo>[-+]?\d+(?:\.\d+)?)\s*%?\s*(?:(?:-|–|to)\s*(?P<hi>\d+(?:\.\d+)?))?\s*%\s*gain"
    r"(?:\s+(?:--|—|–)\s+trigger:\s*(?P<trigger>.+?))?\s*$"
)
LINK_RE = re.compile(r"^\[(?P<text>[^\]]+)\]\((?P<link>[^)\s]+)\)$")
TRIGGER_RE = re.compile(
    r"^\s*(?P<metric>[A-Za-z_][\w%.]*)\s*(?:=|==|<=|>=|<|>)\s*(?P<value>[-+]?\d+(?:\.\d+)?)"
)
SEPARATOR_CELL_RE = re.compile(r":?-{3,}:?")
_DURATION_UNITS = {"ns": 1e-3, "us": 1.0, "µs": 1.0, "μs": 1.0, "ms": 1e3, "s": 1e6}
_MISSING = {"", "-", "—", "n/a", "na", "?", "none"}
_BOTTLENECK_WORDS = {
    Bottleneck.MEMORY: ("memory", "bandwidth", "dram"),
    Bottleneck.COMPUTE: ("compute", "math", "tensor"),
    Bottleneck.LATENCY: ("latency", "launch", "occupancy"),
}
# The plausible range of an estimated gain in percent (a Top 3 item).
GAIN_RANGE = (-100.0, 100_000.0)


def fmt_number(v: float) -> str:
    """At most three decimals, no trailing zeros, integers without a point."""
    if float(v).is_integer():
        return str(int(v))
    text = f"{v:.3f}".rstrip("0").rstrip(".")
    return text if text not in ("-0", "") else "0"


def is_total_stage(name: str) -> bool:
    """A stage row that stands for the whole kernel (`total`, `overall`...)."""
    return name.strip().lower() in TOTAL_STAGE_NAMES


def stage_metrics(stages: list[Any]) -> dict[str, float]:
    """The whole-kernel view of the Stages table: a total stage, else the one stage, else
    the summed duration and duration-weighted percentages (`stages` are objects with the
    `Stage` attributes)."""
    if not stages:
        return {}
    totals = [s for s in stages if s.is_total]
    chosen = totals[0] if totals else (stages[0] if len(stages) == 1 else None)
    out: dict[str, float] = {}
    if chosen is not None:
        for field_name, metric in STAGE_METRICS.items():
            value = getattr(chosen, field_name)
            if value is not None:
                out[metric] = float(value)
        return out
    durations = [s.duration_us for s in stages if s.duration_us is not None]
    if durations:
        out["duration_us"] = float(sum(durations))
    for field_name in ("tc_pct", "dram_pct", "occ_pct"):
        pairs = [(getattr(s, field_name), s.duration_us) for s in stages]
        known = [(v, d) for v, d in pairs if v is not None]
        if not known:
            continue
        weights = [d for _, d in known]
        if all(w is not None and w > 0 for w in weights):
            total = sum(w for w in weights if w is not None)
            value = sum(v * (d or 0.0) for v, d in known) / total
        else:  # no durations to weigh by: plain mean
            value = sum(v for v, _ in known) / len(known)
        out[STAGE_METRICS[field_name]] = value
    return out


def flat_metrics(
    config: dict[str, float], stages: list[Any], measured: dict[str, float]
) -> dict[str, float]:
    """A profile's canonical metrics: title config < stages < `### Metrics`, then the
    idle share of the grid's waves where the profile gives the waves but not the share
    (profiles written before it was measured say the same thing through its inputs)."""
    out = {k: float(v) for k, v in config.items() if k in METRICS}
    out.update(stage_metrics(stages))
    out.update({k: float(v) for k, v in measured.items()})
    waves = out.get("waves_per_sm")
    if "wave_idle_pct" not in out and waves is not None:
        idle = wave_idle_pct(waves, out.get("ctas_per_sm"))
        if idle is not None:
            out["wave_idle_pct"] = idle
    return out


def config_value_problem(key: str, value: object) -> str | None:
    """Why a title dimension cannot be `value` (not finite, or out of its metric's range)."""
    if key in METRICS:
        return metric_value_problem(key, value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return f"{key}: {value!r} is not a finite number"
    return None


def parse_duration_us(cell: str) -> float | None:
    """`412 us`, `0.41 ms`, `412µs`, `900 ns`, `412` (microseconds) -> microseconds."""
    text = cell.strip()
    if text.lower() in _MISSING:
        return None
    m = re.fullmatch(r"(?P<v>[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*(?P<u>ns|us|µs|μs|ms|s)?", text)
    if not m:
        raise ValueError(f"duration {cell!r} is not a number with a unit (ns, us, ms, s)")
    value = float(m["v"]) * _DURATION_UNITS[m["u"] or "us"]
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"duration {cell!r} must be a finite time >= 0")
    return value


def parse_pct(cell: str) -> float | None:
    text = cell.strip()
    if text.lower() in _MISSING:
        return None
    m = re.fullmatch(r"(?P<v>[-+]?\d+(?:\.\d+)?)\s*%?", text)
    if not m:
        raise ValueError(f"percentage {cell!r} is not a number (with or without %)")
    value = float(m["v"])
    if not 0 <= value <= 100:
        raise ValueError(f"percentage {cell!r} is outside 0..100%")
    return value


def parse_metric_value(metric: str, cell: str) -> float:
    """A `### Metrics` cell as a number: the whole cell, an optional unit that is the
    metric's own, finite and inside the range of that unit (ValueError otherwise)."""
    text = cell.strip()
    m = NUMBER_CELL_RE.fullmatch(text)
    if not m:
        hint = " (use a point for decimals: 0.24)" if re.fullmatch(r"[-+]?\d+,\d+", text) else ""
        raise ValueError(f"metric {metric} has value {cell!r}, expected a number{hint}")
    unit = m["unit"]
    known = METRICS[metric].unit
    if unit is not None and unit.lower() != known.lower():
        raise ValueError(
            f"metric {metric} has value {cell!r}, expected a number (in {known}, unit optional)"
        )
    value = float(m["num"].replace(",", ""))
    problem = metric_value_problem(metric, value)
    if problem is not None:
        raise ValueError(f"metric {problem}")
    return value


def parse_bottleneck(text: str) -> Bottleneck | None:
    """`Memory-bound`, `memory bound`, `Latency (launch)-bound` -> the class; None if unknown."""
    low = text.strip().strip("*_` []").lower()
    for cls, words in _BOTTLENECK_WORDS.items():
        if any(low.startswith(w) for w in words):
            return cls
    for cls, words in _BOTTLENECK_WORDS.items():
        if any(w in low for w in words):
            return cls
    return None


def canonical_metric(name: str) -> str | None:
    """A canonical metric name, or the canonical name of an Nsight Compute metric."""
    key = name.strip().strip("`")
    if key in METRICS:
        return key
    return NCU_TO_CANONICAL.get(key)


def table_columns_match(header: list[str], columns: tuple[str, ...]) -> bool:
    """A table's header names `columns` ("TC %", "**Key issue**" match "TC%", "Key Issue")."""

    def norm(cell: str) -> str:
        return re.sub(r"[\s*_`]", "", cell).lower()

    return [norm(h) for h in header] == [norm(c) for c in columns]


def strip_root_cause(text: str) -> str:
    """The Bottleneck section's text without its "Root cause:" label (also written as
    "**Root cause:**" or "Root cause -" by a chatty profiler)."""
    return re.sub(r"^\W*root cause\W*?[:\-–—]\W*", "", text, flags=re.IGNORECASE)


# ---------------------------------------------------------------------- facts


class StageFacts:
    """One Stages row (the attributes of `kbopt.contracts.profile.Stage` that ranking
    reads).  Plain classes here, not dataclasses: this module is imported by a process
    that must answer in a blink, and each dataclass costs a millisecond to create."""

    __slots__ = ("dram_pct", "duration_us", "key_issue", "name", "occ_pct", "tc_pct")

    def __init__(
        self,
        name: str,
        duration_us: float | None,
        tc_pct: float | None,
        dram_pct: float | None,
        occ_pct: float | None,
        key_issue: str,
    ):
        self.name = name
        self.duration_us = duration_us
        self.tc_pct = tc_pct
        self.dram_pct = dram_pct
        self.occ_pct = occ_pct
        self.key_issue = key_issue

    @property
    def is_total(self) -> bool:
        return is_total_stage(self.name)


class ProfileFacts:
    """What strategy selection reads of a profile, with `Profile`'s names and meaning."""

    def __init__(self, kernel: str, version: str):
        self.kernel = kernel
        self.version = version
        self.config: dict[str, float] = {}
        self.stages: list[StageFacts] = []
        self.measured: dict[str, float] = {}
        self.bottleneck: str | None = None  # the class's value ("memory"): `Bottleneck.value`
        self.root_cause = ""
        self.notes: dict[str, str] = {}

    @property
    def metrics(self) -> dict[str, float]:
        """`Profile.metrics`: the same rules (`flat_metrics`)."""
        return flat_metrics(self.config, self.stages, self.measured)

    def text_for_search(self) -> str:
        """`Profile.text_for_search`: root cause, key issues, kernel and stage names."""
        parts = [self.root_cause, *(s.key_issue for s in self.stages if s.key_issue)]
        parts.append(self.kernel.replace("_", " "))
        parts += [s.name for s in self.stages if not s.is_total]
        if self.bottleneck is not None:
            parts.append(f"{self.bottleneck}-bound")
        return " ".join(p for p in parts if p)


def section_kind(heading: str) -> str:
    """What a `###` heading fills (stages, metrics, bottleneck, opportunities, baseline, or a
    note under its own heading): both profile readers dispatch on it, one section per kind."""
    low = heading.lower()
    if low.startswith("bottleneck"):
        return "bottleneck"
    if low.startswith("top") and "opportunit" in low:
        return "opportunities"
    if low.startswith("vs baseline") or low.startswith("vs. baseline"):
        return "baseline"
    return low if low in ("stages", "metrics") else heading


class _Decline(Exception):
    """Something `Profile.parse` would report, or that this reader is not sure about."""


def read_facts(text: str) -> ProfileFacts | None:
    """The facts of a profile in the contract format, or None when `Profile.parse` would
    report a problem (or might: on any doubt)."""
    try:
        return _read(text.splitlines())
    except (_Decline, ValueError, KeyError, IndexError):
        return None


def _read(lines: list[str]) -> ProfileFacts:
    # The same walk as kbopt.contracts.profile._Parser, declining where it reports.
    start = next((i for i, ln in enumerate(lines) if ln.strip() and not COMMENT_RE.match(ln)), None)
    if start is None:
        raise _Decline
    m = TITLE_RE.match(lines[start].strip())
    if m is None:
        raise _Decline
    head, _, conf = m["body"].partition("|")
    words = [w.strip("[]") for w in head.split()]
    if not words or not words[0]:
        raise _Decline  # no kernel, or one pydantic refuses (empty)
    facts = ProfileFacts(kernel=words[0], version=" ".join(words[1:]))
    for part in filter(None, (p.strip().strip("[]") for p in conf.split(","))):
        key, eq, value = (x.strip() for x in part.partition("="))
        num = NUMBER_CELL_RE.fullmatch(value)
        if not eq or not key or num is None or num["unit"] or "," in value:
            raise _Decline
        if key in facts.config:
            raise _Decline
        number = float(num["num"])
        if config_value_problem(key, number) is not None:
            raise _Decline
        facts.config[key] = number
    sections: list[tuple[str, list[str]]] = []
    for line in lines[start + 1 :]:
        h = HEADING_RE.match(line.strip())
        if h:
            sections.append((h["title"], []))
        elif line.strip().startswith("## "):
            raise _Decline
        elif sections:
            sections[-1][1].append(line)
        elif line.strip():
            raise _Decline
    kinds = [section_kind(heading) for heading, _ in sections]
    if len(set(kinds)) != len(kinds):
        raise _Decline  # a section given twice
    for (heading, body), kind in zip(sections, kinds, strict=True):
        if kind == "stages":
            facts.stages = _stages(body)
        elif kind == "metrics":
            facts.measured = _metrics(body)
        elif kind == "bottleneck":
            cls = parse_bottleneck(heading.partition(":")[2])
            if cls is None:
                raise _Decline
            facts.bottleneck = cls.value
            facts.root_cause = strip_root_cause(" ".join(t.strip() for t in body if t.strip()))
        elif kind == "opportunities":
            _check_opportunities(body)
        elif kind == "baseline":
            _table(body, BASELINE_COLUMNS)
        else:
            facts.notes[heading] = "\n".join(body).strip()
    return facts


def _table(body: list[str], columns: tuple[str, ...]) -> list[list[str]]:
    rows = [t for t in body if t.strip().startswith("|")]
    if not rows or any(t.strip() and not t.strip().startswith("|") for t in body):
        raise _Decline
    if not table_columns_match(split_row(rows[0]), columns):
        raise _Decline
    out = []
    for t in rows[1:]:
        cells = split_row(t)
        if all(SEPARATOR_CELL_RE.fullmatch(c) for c in cells):
            continue
        if len(cells) != len(columns):
            raise _Decline
        out.append(cells)
    if not out:
        raise _Decline  # a header alone: the full parser reports it
    return out


def _stages(body: list[str]) -> list[StageFacts]:
    stages = []
    seen: set[str] = set()
    for cells in _table(body, STAGE_COLUMNS):
        name = cells[0].strip().lower()
        if name in seen or not cells[0]:
            raise _Decline  # listed twice, or a name pydantic refuses (empty)
        seen.add(name)
        stages.append(
            StageFacts(
                name=cells[0],
                duration_us=parse_duration_us(cells[1]),
                tc_pct=parse_pct(cells[2]),
                dram_pct=parse_pct(cells[3]),
                occ_pct=parse_pct(cells[4]),
                key_issue=cells[6],
            )
        )
    return stages


def _metrics(body: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, value in _table(body, METRIC_COLUMNS):
        metric = canonical_metric(name)
        if metric is None or metric in out:
            raise _Decline
        out[metric] = parse_metric_value(metric, value)
    return out


def _check_opportunities(body: list[str]) -> None:
    """Top 3 items are not used by ranking, but one the full parser refuses fails it."""
    for t in body:
        if not t.strip():
            continue
        m = OPP_RE.match(t)
        if m is None:
            raise _Decline
        name = m["name"].strip()
        lm = LINK_RE.match(name)
        if lm:
            name = lm["text"]
        if not name.strip("[]"):
            raise _Decline
        for v in (m["lo"], m["hi"]):
            if v is not None:
                gain = float(v)
                if not (math.isfinite(gain) and GAIN_RANGE[0] <= gain <= GAIN_RANGE[1]):
                    raise _Decline
