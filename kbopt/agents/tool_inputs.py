"""Input models of the agents' tools: pydantic, unknown fields refused (`extra="forbid"`).

The JSON schema of each model is the tool's `input_schema` in the Messages API, and the
same model validates what `kbopt agent tool NAME --input JSON` receives.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from kbopt.model import EvidenceRow
from kbopt.vocab import Bottleneck, Kind, Language, Relation, SourceType, Status

# File contents are bytes an agent chooses (a form feed in a source file is its own
# business); every other text field is refused a control character, and the fields
# below must be one line (a heading, a name, a path, a provenance line).
_FREE_TEXT = frozenset({"content", "old", "new"})
_ONE_LINE = frozenset(
    {
        "name",
        "target",
        "source",
        "device",
        "versions",
        "date",
        "command",
        "heading",
        "path",
        "keyword",
        "module",
        "kernel",
        "version",
        "config",
        "language",
        "metric",
        "context",
        "pitfall",
    }
)
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("*")
    @classmethod
    def _clean_text(cls, v: Any, info: ValidationInfo) -> Any:
        name = info.field_name or ""
        if name in _FREE_TEXT:
            return v
        for item in v if isinstance(v, list) else [v]:
            if not isinstance(item, str):
                continue
            if _CONTROL_RE.search(item):
                raise ValueError("contains a control character (NUL, ESC...)")
            if name in _ONE_LINE and ("\n" in item or "\r" in item):
                raise ValueError("must be one line")
        return v


class SearchInput(_Input):
    query: str = Field(min_length=1, description="words to search for")
    kind: Kind | None = Field(default=None, description="optimization or anti-pattern")
    language: str | None = Field(default=None, description="a language, or 'shared'")
    bottleneck: Bottleneck | None = None
    metric: str | None = Field(default=None, description="a canonical metric name")
    limit: int = Field(default=10, ge=1, le=50)


class ProfileTextInput(_Input):
    profile: str = Field(
        min_length=1, description="a profile in the profiler contract's Markdown shape"
    )
    language: str | None = Field(
        default=None,
        description="add this language's entries to the shared ones, 'shared' for shared "
        "entries only, or 'all'; default: the profiled version's own language (triton_v3: "
        "triton), else shared entries only",
    )
    limit: int = Field(default=5, ge=1, le=20)


class NameInput(_Input):
    name: str = Field(min_length=1, description="entry name (kebab-case)")


class WriteEntryInput(_Input):
    markdown: str = Field(
        min_length=1, description="the whole entry file: YAML front matter (with name) + template"
    )
    update: bool = Field(default=False, description="replace an existing entry of that name")


class RecordEvidenceInput(_Input):
    name: str = Field(min_length=1, description="entry the evidence belongs to")
    source_type: SourceType
    source: str = Field(min_length=1, description="results file, paper, repository file...")
    device: str | None = None
    versions: str | None = None
    date: str | None = None
    command: str | None = Field(default=None, description="required for a local experiment")
    rows: list[EvidenceRow] = Field(min_length=1)
    status: Status | None = Field(default=None, description="new status of the entry, if any")


class DraftInput(_Input):
    kind: Kind
    name: str = Field(min_length=1, description="kebab-case entry name")
    language: Language | None = Field(default=None, description="absent: a shared entry")


class NarrowInput(_Input):
    name: str = Field(min_length=1)
    contexts: list[str] = Field(default_factory=list, description="When to Apply prose bullets")
    triggers: list[str] = Field(default_factory=list, description="`metric op value` conditions")
    pitfall: str | None = Field(default=None, description="the situation where it failed")


class InteractionInput(_Input):
    name: str = Field(min_length=1)
    relation: Relation
    target: str = Field(min_length=1, description="the other entry's name")
    note: str = ""


class MetricEffectInput(_Input):
    metric: str = Field(min_length=1, description="a canonical metric (see `kbopt vocab`)")
    note: str = ""


class ConvertKindInput(_Input):
    name: str = Field(min_length=1)
    context: str = Field(min_length=1, description="the situation in which the opposite holds")
    source_type: SourceType
    source: str = Field(min_length=1)
    device: str | None = None
    versions: str | None = None
    date: str | None = None
    command: str | None = None
    rows: list[EvidenceRow] = Field(min_length=1, description="the measurement that showed it")
    failure: str = Field(
        default="",
        description="into an anti-pattern: the failure pattern (why the change hurts there); "
        "it becomes the Mechanism",
    )
    revealed_by: list[MetricEffectInput] = Field(
        default_factory=list,
        description="into an anti-pattern: the metrics that revealed the regression",
    )
    trigger: str | None = Field(
        default=None,
        description="into an anti-pattern: `metric op value` that detects the situation",
    )
    situations: list[str] = Field(
        default_factory=list, description="more situations where the failure happens"
    )
    generalization: str = Field(default="", description="the reusable rule (optional)")


class KernelInput(_Input):
    kernel: str = Field(pattern=r"^[a-z0-9_]+$", description="kernel folder name under kernels/")


class UpdateDevlogInput(KernelInput):
    section: Literal["performance", "best", "entry"] = Field(
        description="performance: a profile contract; best: current best results; entry: a "
        "new version's devlog entry"
    )
    text: str = Field(min_length=1)
    heading: str | None = Field(
        default=None,
        description="entry: '<version> -- <date> -- <summary>'; performance: a header line",
    )


class RunKernelInput(KernelInput):
    version: str = Field(pattern=r"^[A-Za-z0-9_.,-]+$", description="version(s), comma-separated")
    config: str | None = Field(
        default=None,
        pattern=r"^[a-z][a-z0-9_]*$",
        description="a trial point of the kernel's spec (`kbopt kernel check KERNEL` lists "
        "them), or 'all'; default: the spec's whole trial matrix (benchmark) or its first "
        "point (profile)",
    )
    dims: dict[str, int] | None = Field(
        default=None,
        description="the kernel's dimensions instead of a trial point, e.g. "
        '{"rows": 8192, "hidden": 4096}; dimensions left out take the first trial\'s values',
    )


class ProfileKernelInput(RunKernelInput):
    version: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    language: Language | None = Field(default=None, description="language catalog to add")
    update_devlog: bool = Field(default=True, description="write the devlog performance section")
    backend: Literal["real", "fake"] = Field(
        default="real", description="fake: the deterministic stand-in, for dry runs and tests"
    )


class BenchmarkInput(RunKernelInput):
    backend: Literal["real", "fake"] = Field(
        default="real",
        description="fake: stand-in figures from the fake backend (one profile per version "
        "and configuration), for dry runs and tests; never evidence",
    )


class RunTestsInput(_Input):
    path: str = Field(default="tests", description="test file or folder inside the project")
    keyword: str | None = Field(default=None, description="pytest -k expression")


class PathInput(_Input):
    path: str = Field(min_length=1, description="path relative to the project root")


class EditInput(PathInput):
    old: str = Field(min_length=1, description="exact text to replace (must occur once)")
    new: str = Field(description="replacement text")


class WriteFileInput(PathInput):
    content: str


class ListExportsInput(_Input):
    module: str = Field(
        min_length=1, description="dotted module name (kernels.mla_decode.triton_v1) or .py path"
    )


class RouteInput(_Input):
    request: str = Field(min_length=1)
    sm: int | None = Field(default=None, description="target GPU SM version, e.g. 90 or 100")
    existing_triton: bool = False


class DelegateInput(_Input):
    specialist: Literal[
        "profiler",
        "kernel-designer",
        "perf-torch-cuda-graph-specialist",
        "perf-profiling-specialist",
        "kernel-triton-specialist",
        "kernel-tileir-specialist",
        "kernel-cute-specialist",
    ]
    task: str = Field(min_length=1, description="the task prompt; include benchmarking in scope")
