"""The orchestrator -> kernel designer task (Optimization Task), typed.

Shape (the seed's, with each bracket filled in a fixed way)::

    ## Optimization Task: mla_decode triton_v2 -> triton_v3
    ### Current Bottleneck: Latency-bound -- <the profiler's root cause>
    ### Optimizations to Apply:
    1. [Split-KV decoding](docs/knowledge/optimizations/split-kv-decode.md) -- <rationale>

    ### Constraints
    - Register budget: 168 registers/thread
    - Target occupancy: 25%
    - Control level: tile-level (Triton is enough)
    - Language: triton
    - Language constraint: <one per line>

An optimization without a knowledge-base file is written without the link
(`1. <name> -- <rationale>`).  Constraint bullets that are none of the named ones are
kept in `other`, verbatim.  `designer_prompt()` renders the designer's launch template.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from kbopt.contracts._sections import Collector, find, items, require, split_document
from kbopt.contracts.profile import fmt_number, parse_bottleneck
from kbopt.vocab import Bottleneck, Language

TITLE_RE = re.compile(
    r"^##\s+Optimization Task:\s*(?P<kernel>\S+)\s+(?P<current>\S+)\s*->\s*(?P<new>\S+)\s*$"
)
SHAPE = "## Optimization Task: <kernel> <current> -> <new_version>"
_ITEM_RE = re.compile(
    r"^(?:\[(?P<name>[^\]]+)\]\((?P<link>[^)\s]+)\)|(?P<plain>.+?))\s+(?:--|—)\s+(?P<why>\S.*)$"
)
_CONSTRAINT_RE = re.compile(r"^(?P<key>[A-Za-z ]+):\s*(?P<value>.+)$")


# The kernel designer's launch prompt (the orchestration workflow's template): `items` is
# the optimizations to apply, each with its rationale, separated by semicolons.
DESIGNER_LAUNCH = (
    "Create {kernel} {new_version} from {current_version}.\n"
    "Language: {language}.\n"
    "Load /design-{language}-kernel and the matching reference skill if one exists.\n"
    "Apply optimizations: [{items}].\n"
    "Return implementation summary per the output contract."
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class TaskOptimization(_Strict):
    name: str = Field(min_length=1)
    rationale: str = Field(min_length=1)
    link: str | None = None  # path of the shared or language-specific knowledge file

    def render(self, number: int) -> str:
        name = f"[{self.name}]({self.link})" if self.link else self.name
        return f"{number}. {name} -- {self.rationale}"


class Constraints(_Strict):
    register_budget: int | None = None  # registers per thread
    target_occupancy_pct: float | None = None
    control_level: str = ""
    language: Language | None = None
    language_constraints: list[str] = Field(default_factory=list)
    other: list[str] = Field(default_factory=list)

    def bullets(self) -> list[str]:
        out = []
        if self.register_budget is not None:
            out.append(f"Register budget: {self.register_budget} registers/thread")
        if self.target_occupancy_pct is not None:
            out.append(f"Target occupancy: {fmt_number(self.target_occupancy_pct)}%")
        if self.control_level:
            out.append(f"Control level: {self.control_level}")
        if self.language is not None:
            out.append(f"Language: {self.language.value}")
        out += [f"Language constraint: {c}" for c in self.language_constraints]
        out += list(self.other)
        return out


class OptimizationTask(_Strict):
    kernel: str = Field(min_length=1)
    current_version: str = Field(min_length=1)
    new_version: str = Field(min_length=1)
    bottleneck: Bottleneck | None = None
    bottleneck_detail: str = ""
    optimizations: list[TaskOptimization] = Field(min_length=1)
    constraints: Constraints = Field(default_factory=Constraints)

    def render(self) -> str:
        head = self.bottleneck.value.capitalize() + "-bound" if self.bottleneck else "unknown"
        if self.bottleneck_detail:
            head += f" -- {self.bottleneck_detail}"
        out = [
            f"## Optimization Task: {self.kernel} {self.current_version} -> {self.new_version}",
            f"### Current Bottleneck: {head}",
            "### Optimizations to Apply:",
            *[o.render(i) for i, o in enumerate(self.optimizations, 1)],
            "",
            "### Constraints",
            *[f"- {b}" for b in self.constraints.bullets()],
        ]
        return "\n".join(out) + "\n"

    def designer_prompt(self) -> str:
        """The kernel-designer launch template, filled in with this task."""
        language = self.constraints.language.value if self.constraints.language else "triton"
        listed = "; ".join(f"{o.name} ({o.rationale})" for o in self.optimizations)
        return (
            DESIGNER_LAUNCH.format(
                kernel=self.kernel,
                new_version=self.new_version,
                current_version=self.current_version,
                language=language,
                items=listed,
            )
            + "\n"
        )

    @classmethod
    def parse(cls, text: str, path: str = "<task>") -> OptimizationTask:
        errors = Collector(path)
        m, line, sections = split_document(text, TITLE_RE, SHAPE, errors)
        data: dict[str, object] = {
            "kernel": m["kernel"],
            "current_version": m["current"],
            "new_version": m["new"],
        }
        for s in sections:
            if s.title.lower() not in {
                "current bottleneck",
                "optimizations to apply",
                "constraints",
            }:
                errors.add(s.line, f"unknown section {s.title!r} in an optimization task")
        head = require(sections, "Current Bottleneck", errors, line, "from the profiler")
        if head is not None:
            parts = re.split(r"\s+(?:--|—)\s+", head.inline, maxsplit=1)
            word = parts[0]
            detail = parts[1] if len(parts) > 1 else ""
            if word.lower() != "unknown":
                b = parse_bottleneck(word)
                if b is None:
                    errors.add(
                        head.line, f"bottleneck {word!r} is not Memory-, Compute- or Latency-bound"
                    )
                data["bottleneck"] = b
            data["bottleneck_detail"] = detail
        opts = require(sections, "Optimizations to Apply", errors, line, "a numbered list")
        parsed_opts = []
        if opts is not None:
            for n, text_item in items(opts, errors, "Optimizations to Apply", numbered=True):
                im = _ITEM_RE.match(text_item)
                if im is None:
                    errors.add(n, "an optimization reads `1. [name](link) -- rationale`")
                    continue
                parsed_opts.append(
                    TaskOptimization(
                        name=(im["name"] or im["plain"]).strip(),
                        link=im["link"],
                        rationale=im["why"].strip(),
                    )
                )
            if not parsed_opts:
                errors.add(opts.line, "no optimization to apply")
        data["optimizations"] = parsed_opts
        cons = find(sections, "Constraints")
        data["constraints"] = _constraints(cons, errors) if cons is not None else Constraints()
        errors.raise_if_any()
        try:
            return cls.model_validate(data)
        except ValueError as exc:
            errors.add(line, f"invalid task: {str(exc).splitlines()[0]}")
            errors.raise_if_any()
            raise


def _constraints(section: object, errors: Collector) -> Constraints:
    from kbopt.contracts._sections import Section

    assert isinstance(section, Section)
    c = Constraints()
    for n, text in items(section, errors, "Constraints", numbered=False):
        m = _CONSTRAINT_RE.match(text)
        key = m["key"].strip().lower() if m else ""
        value = m["value"].strip() if m else ""
        try:
            if key == "register budget":
                c.register_budget = int(value.split()[0])
            elif key == "target occupancy":
                c.target_occupancy_pct = float(value.rstrip("%").strip())
            elif key == "control level":
                c.control_level = value
            elif key == "language":
                c.language = Language(value)
            elif key == "language constraint":
                c.language_constraints.append(value)
            else:
                c.other.append(text)
        except ValueError:
            errors.add(
                n, f"constraint {text!r}: the value after {m['key'] if m else ''!r} is not valid"
            )
    return c
