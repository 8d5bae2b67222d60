"""The autopilot analysis format, typed.

Shape::

    Primary bottleneck: memory-bound
    Evidence: Memory bandwidth at 89% of peak, compute at 35%
    Recommendations:
    1. [High] Enable FlashAttention for self-attention layers
    2. [Medium] Apply memory pooling for attention buffers
    3. [Low] Consider gradient checkpointing for memory reduction

`Analysis.from_profile` writes it from a profiler contract (levels from the estimated
gain), and `Analysis.to_profile` goes the other way so strategy selection can run on
an analysis alone: the evidence's numbers become canonical metrics where the wording
is unambiguous (`memory bandwidth at 89%` -> `dram_throughput_pct`, `compute at 35%`
-> `sm_throughput_pct`, `occupancy 25%`, `tensor cores at 10%`, or any `metric=value`
with a canonical name).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kbopt.contracts.profile import Profile, canonical_metric, fmt_number, parse_bottleneck
from kbopt.contracts.profile_text import COMMENT_RE, TITLE_RE
from kbopt.errors import Problem, ProblemList
from kbopt.model import metric_value_problem
from kbopt.vocab import Level

# Estimated gain (%) from which an opportunity is rated High / Medium; below is Low.
HIGH_GAIN_PCT = 30.0
MEDIUM_GAIN_PCT = 10.0

_REC_RE = re.compile(r"^\s*\d+[.)]\s*\[(?P<level>high|medium|low)\]\s*(?P<text>.+?)\s*$", re.I)
_FIELD_RE = re.compile(
    r"^\s*(?P<key>primary bottleneck|evidence|recommendations)\s*:\s*(?P<value>.*)$", re.I
)
# Evidence wording -> canonical metric; the first pattern that matches a phrase wins.
_EVIDENCE_PATTERNS: tuple[tuple[str, str], ...] = (
    (
        r"(?:memory|dram)\s+(?:bandwidth|throughput)\s+(?:at\s+)?(\d+(?:\.\d+)?)\s*%",
        "dram_throughput_pct",
    ),
    (
        r"tensor[\s-]cores?\s+(?:utili[sz]ation\s+)?(?:at\s+)?(\d+(?:\.\d+)?)\s*%",
        "tensor_core_util_pct",
    ),
    (r"(?:compute|sm)\s+(?:throughput\s+)?(?:at\s+)?(\d+(?:\.\d+)?)\s*%", "sm_throughput_pct"),
    (r"occupancy\s+(?:at\s+|of\s+)?(\d+(?:\.\d+)?)\s*%", "achieved_occupancy_pct"),
    (r"l2\s+hit\s+rate\s+(?:at\s+|of\s+)?(\d+(?:\.\d+)?)\s*%", "l2_hit_rate_pct"),
)
_ASSIGN_RE = re.compile(r"`?([a-z_][a-z0-9_]*)`?\s*=\s*([-+]?\d+(?:\.\d+)?)")


def _evidence_values(evidence: str) -> dict[str, float]:
    out: dict[str, float] = {}
    low = evidence.lower()
    for pattern, metric in _EVIDENCE_PATTERNS:
        m = re.search(pattern, low)
        if m and metric not in out:
            out[metric] = float(m.group(1))
    for name, value in _ASSIGN_RE.findall(low):
        canonical = canonical_metric(name)
        if canonical is not None:
            out[canonical] = float(value)
    return out


def _evidence_problems(evidence: str) -> list[str]:
    """Numbers the evidence states for a metric that are outside the metric's range."""
    found = _evidence_values(evidence).items()
    return [p for k, v in found if (p := metric_value_problem(k, v)) is not None]


class Recommendation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    level: Level
    text: str = Field(min_length=1)


class Analysis(BaseModel):
    """`Primary bottleneck` / `Evidence` / `Recommendations` as the autopilot receives them."""

    model_config = ConfigDict(extra="forbid")

    primary_bottleneck: str = Field(min_length=1)  # as written: "memory-bound"
    evidence: str = ""
    recommendations: list[Recommendation] = Field(default_factory=list)

    def render(self) -> str:
        out = [f"Primary bottleneck: {self.primary_bottleneck}", f"Evidence: {self.evidence}"]
        out.append("Recommendations:")
        out += [
            f"{i}. [{r.level.value.capitalize()}] {r.text}"
            for i, r in enumerate(self.recommendations, 1)
        ]
        return "\n".join(out) + "\n"

    @classmethod
    def parse(cls, text: str, path: str = "<analysis>") -> Analysis:
        problems: list[Problem] = []
        data: dict[str, object] = {}
        recs: list[Recommendation] = []
        seen: dict[str, int] = {}
        in_recs = False
        lines = text.splitlines()
        first = next(
            (n for n, line in enumerate(lines, 1) if line.strip() and not COMMENT_RE.match(line)),
            None,
        )
        if first is not None and TITLE_RE.match(lines[first - 1].strip()):
            # The other contract: one line saying so, not one complaint per line of it.
            raise ProblemList(
                [
                    Problem(
                        "this is a profile (`## Profile:`), not an analysis (`Primary "
                        "bottleneck:` / `Evidence:` / `Recommendations:`); `kbopt recommend` "
                        "ranks a profile",
                        path,
                        first,
                    )
                ]
            )
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            m = _FIELD_RE.match(line)
            if m:
                key = m["key"].lower()
                in_recs = key == "recommendations"
                if key in seen:
                    problems.append(
                        Problem(f"`{m['key']}:` appears twice (first on line {seen[key]})", path, n)
                    )
                    continue
                seen[key] = n
                value = m["value"].strip()
                if key == "primary bottleneck":
                    if not value:
                        problems.append(
                            Problem("`Primary bottleneck:` is empty (e.g. memory-bound)", path, n)
                        )
                    elif value.lower() != "unknown" and parse_bottleneck(value) is None:
                        # `from_profile` writes "unknown" for a profile without a class;
                        # any other word that names no class would rank on nothing.
                        problems.append(
                            Problem(
                                f"unknown bottleneck {value!r}: write memory-bound, "
                                "compute-bound, latency-bound or unknown",
                                path,
                                n,
                            )
                        )
                    data["primary_bottleneck"] = value
                elif key == "evidence":
                    data["evidence"] = value
                    for problem in _evidence_problems(value):
                        problems.append(Problem(f"Evidence: {problem}", path, n))
                elif value:
                    problems.append(
                        Problem("`Recommendations:` takes numbered lines below it", path, n)
                    )
                continue
            r = _REC_RE.match(line)
            if in_recs and r:
                recs.append(Recommendation(level=Level(r["level"].lower()), text=r["text"]))
            elif in_recs:
                problems.append(
                    Problem("a recommendation reads `1. [High|Medium|Low] <text>`", path, n)
                )
            else:
                problems.append(
                    Problem(
                        "expected `Primary bottleneck:`, `Evidence:` or `Recommendations:`",
                        path,
                        n,
                    )
                )
        if "primary_bottleneck" not in data:
            problems.append(Problem("missing `Primary bottleneck: <class>-bound` line", path, 1))
        if problems:
            raise ProblemList(problems)
        data["recommendations"] = recs
        try:
            return cls.model_validate(data)
        except ValidationError as exc:  # what the line checks above did not foresee
            raise ProblemList(
                [Problem(f"invalid analysis: {e['msg']}", path, 1) for e in exc.errors()]
            ) from None

    def evidence_metrics(self) -> dict[str, float]:
        """Canonical metrics stated in the evidence (only unambiguous wordings); values
        outside their metric's range are left out (`parse` refuses them)."""
        return {
            k: v
            for k, v in _evidence_values(self.evidence).items()
            if metric_value_problem(k, v) is None
        }

    def to_profile(self, kernel: str = "unknown", version: str = "") -> Profile:
        """A Profile carrying this analysis' class, evidence text and evidence metrics."""
        return Profile(
            kernel=kernel,
            version=version,
            bottleneck=parse_bottleneck(self.primary_bottleneck),
            root_cause=self.evidence,
            measured=self.evidence_metrics(),
        )

    @classmethod
    def from_profile(cls, profile: Profile) -> Analysis:
        """The autopilot's input written from a profiler contract."""
        m = profile.metrics
        parts = []
        if "dram_throughput_pct" in m:
            parts.append(f"Memory bandwidth at {fmt_number(m['dram_throughput_pct'])}% of peak")
        if "sm_throughput_pct" in m:
            parts.append(f"compute at {fmt_number(m['sm_throughput_pct'])}%")
        if "tensor_core_util_pct" in m:
            parts.append(f"tensor cores at {fmt_number(m['tensor_core_util_pct'])}%")
        if "achieved_occupancy_pct" in m:
            parts.append(f"occupancy {fmt_number(m['achieved_occupancy_pct'])}%")
        evidence = ", ".join(parts)
        if profile.root_cause:
            evidence = f"{evidence}. {profile.root_cause}" if evidence else profile.root_cause
        recs = []
        for o in profile.opportunities:
            gain = o.gain_pct_max if o.gain_pct_max is not None else o.gain_pct
            level = (
                Level.HIGH
                if gain >= HIGH_GAIN_PCT
                else Level.MEDIUM
                if gain >= MEDIUM_GAIN_PCT
                else Level.LOW
            )
            text = o.name + (f" ({o.link})" if o.link else "")
            if o.trigger:
                text += f" -- trigger: {o.trigger}"
            recs.append(Recommendation(level=level, text=text))
        primary = f"{profile.bottleneck.value}-bound" if profile.bottleneck else "unknown"
        return cls(primary_bottleneck=primary, evidence=evidence, recommendations=recs)
