"""Which specialist gets a task: the French source's rules A2-A4 as one function.

`route(request, sm=..., existing_triton=...)` returns the ordered stages (one
specialist, or the TileIR two-stage pipeline) and the rule that decided.
`check_delegation(target, task, ...)` refuses a delegation to the wrong specialist
and names the rule that forbids it.  Every rule has an id in `RULES`; the table test
in tests/agents/test_routing.py walks them one by one against the source's examples.

Order of the checks (most specific intent first):
  1. CUDA Graph work          -> perf-torch-cuda-graph-specialist
  2. pure measurement         -> perf-profiling-specialist (no write/optimize verb)
  3. TileIR / nvtriton / ENABLE_TILE -> triton then tileir; tileir only if a Triton kernel exists
  4. CuTe DSL                 -> kernel-cute-specialist
  5. Triton (no TileIR)       -> kernel-triton-specialist
  6. no preference            -> by SM version: SM100+ new -> triton then tileir;
                                 SM100+ existing Triton -> tileir; SM80-SM90 -> triton or cute
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kbopt.agents.roles import (
    CUDA_GRAPH,
    CUTE,
    DELEGATES,
    KERNEL_DESIGNER,
    KERNEL_SPECIALISTS,
    PROFILER,
    PROFILING,
    TILEIR,
    TRITON,
)
from kbopt.errors import KbError
from kbopt.vocab import Language

# Rule id -> the rule in our words (the French source says each of these).
RULES: dict[str, str] = {
    "A1-cuda-graph": "CUDA Graph capture and replay work goes to perf-torch-cuda-graph-specialist",
    "A1-profiling": "performance validation and measurement go to perf-profiling-specialist",
    "A2-cute": "CuTe DSL tasks go to kernel-cute-specialist, never to kernel-triton-specialist",
    "A2-triton": "Triton kernel tasks go to kernel-triton-specialist, never to kernel-cute-specialist",
    "A2-tileir": "TileIR optimization goes to kernel-tileir-specialist",
    "A2-domain": "the specialist of every delegation must match the domain of the task",
    "A3.1-generate": "'generate a TileIR kernel': kernel-triton-specialist FIRST, then kernel-tileir-specialist",
    "A3.1-optimize": "'optimize for TileIR': kernel-triton-specialist first if no kernel exists, then kernel-tileir-specialist",
    "A3.1-convert": "'convert a Triton kernel to TileIR': kernel-tileir-specialist only (the kernel exists)",
    "A3.2-cute": "a request that mentions CuTe DSL goes to kernel-cute-specialist",
    "A3.3-triton": "a request that mentions Triton without TileIR context goes to kernel-triton-specialist",
    "A3.4-blackwell-new": "no preference, Blackwell (SM100+), new kernel: kernel-triton-specialist FIRST, then kernel-tileir-specialist",
    "A3.4-blackwell-existing": "no preference, Blackwell (SM100+) with an existing Triton kernel: kernel-tileir-specialist only",
    "A3.4-ampere-hopper": "no preference, Ampere/Hopper (SM80-SM90): kernel-triton-specialist or kernel-cute-specialist",
    "A3-tileir-no-scratch": "kernel-tileir-specialist only optimizes EXISTING Triton kernels and never writes one from scratch",
    "A4-terminology": "TileIR is NVIDIA's Triton backend for Blackwell and is unrelated to CuTe DSL: a TileIR kernel is Triton + TileIR",
}


class RoutingError(KbError):
    """No rule decides (no language named and no usable SM version)."""


class DelegationRefused(KbError):
    """A delegation to the wrong specialist; `rule` is the id in RULES that forbids it."""

    def __init__(self, target: str, rule: str, expected: tuple[str, ...]):
        self.target = target
        self.rule = rule
        self.expected = expected
        want = " or ".join(expected) if expected else "another specialist"
        super().__init__(
            f"delegation to {target} refused by rule {rule}: {RULES[rule]}. Delegate to {want}."
        )


@dataclass(frozen=True)
class Route:
    rule: str
    stages: tuple[str, ...]  # in order; two entries = the TileIR two-stage pipeline
    alternatives: tuple[str, ...] = ()  # also acceptable for the first stage
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def reason(self) -> str:
        return RULES[self.rule]

    def as_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "reason": self.reason,
            "stages": list(self.stages),
            "alternatives": list(self.alternatives),
            "notes": list(self.notes),
        }


# --------------------------------------------------------------------------- intent detection

_TILEIR = re.compile(r"\btile[\s_-]?ir\b|nvtriton|enable_tile", re.IGNORECASE)
# "CuTe" alone counts in its own spelling only ("cute" is also an English word).
_CUTE = re.compile(r"(?i:\bcute[\s_-]?dsl\b)|\bCuTe\b|(?i:\bcutlass[\s_-]?(?:4|dsl)\b)")
_CUDA_GRAPH = re.compile(r"cuda[\s_-]?graphs?|graphes?\s+cuda|cudagraph", re.IGNORECASE)
_MEASURE = re.compile(
    r"\b(profile|profil\w*|measure\w*|mesur\w*|benchmark\w*|validate|valide\w*|time|timing)\b",
    re.IGNORECASE,
)
# Verbs that make a task a change of code, not a measurement (English and French).
_CHANGE = re.compile(
    r"\b(write|writes|generate|create|implement|optimi[sz]e|convert|port|fuse|apply|add|"
    r"rewrite|refactor|tune|change|modify|edit|replace|shrink|grow|increase|reduce|raise|"
    r"lower|set|switch|update|make|"
    r"écri\w*|ecri\w*|génér\w*|gener\w*|cré\w*|implément\w*|optimis\w*|convert\w*|"
    r"fusion\w*|fusionn\w*|appliqu\w*|ajout\w*|modifi\w*|chang\w*|rédui\w*|"
    r"augment\w*|remplac\w*|ajust\w*)\b",
    re.IGNORECASE,
)
_EXISTING = re.compile(
    r"\b(existing|existant\w*|already|déjà|deja|convert\w*|port)\b", re.IGNORECASE
)
_PY_FILE = re.compile(r"[\w./-]+\.py\b")
_NEGATED_EXISTING = re.compile(
    r"\b(no|without|aucun\w*|sans|pas\s+de)\s+(?:\w+\s+){0,3}(existing|existant\w*|exist\w*)",
    re.IGNORECASE,
)
_GENERATE = re.compile(
    r"\b(generate|write|create|new|génér\w*|écri\w*|cré\w*|nouveau)\b", re.IGNORECASE
)
_LANGUAGE_LINE = re.compile(r"^\s*Language:\s*([A-Za-z-]+)", re.IGNORECASE | re.MULTILINE)


def _tokens(text: str) -> set[str]:
    # File names count too: `triton_v2.py` names Triton, `nvtriton` does not.
    return set(re.split(r"[^a-z0-9]+", text.lower()))


def mentions_tileir(text: str) -> bool:
    return bool(_TILEIR.search(text))


def mentions_cute(text: str) -> bool:
    # `cute_v2.py`, `cute_common`: kbopt's file names for CuTe DSL kernels.
    return bool(_CUTE.search(text)) or bool(re.search(r"(?i)\bcute_\w", text))


def mentions_triton(text: str) -> bool:
    return "triton" in _tokens(text)


def mentions_existing_kernel(text: str) -> bool:
    """The request says the kernel already exists (or points at its file)."""
    if _NEGATED_EXISTING.search(text):
        return False
    if _EXISTING.search(text):
        return True
    # A file to work on ("add TileIR configs to fused_gelu.py") is an existing kernel,
    # unless the request creates it.
    return bool(_PY_FILE.search(text)) and not _GENERATE.search(text)


def is_measurement(text: str) -> bool:
    return bool(_MEASURE.search(text)) and not _CHANGE.search(text)


# --------------------------------------------------------------------------- routing


def route(request: str, *, sm: int | None = None, existing_triton: bool = False) -> Route:
    """The specialist stages for a request, decided by the first rule that applies."""
    existing = existing_triton or mentions_existing_kernel(request)
    if _CUDA_GRAPH.search(request):
        return Route("A1-cuda-graph", (CUDA_GRAPH,))
    if is_measurement(request):
        return Route("A1-profiling", (PROFILING,))
    if mentions_tileir(request):
        if existing and not _NEGATED_EXISTING.search(request):
            return Route(
                "A3.1-convert", (TILEIR,), notes=("stage one skipped: the Triton kernel exists",)
            )
        rule = "A3.1-generate" if _GENERATE.search(request) else "A3.1-optimize"
        return Route(rule, (TRITON, TILEIR), notes=("two-stage TileIR pipeline",))
    if mentions_cute(request):
        return Route("A3.2-cute", (CUTE,))
    if mentions_triton(request):
        return Route("A3.3-triton", (TRITON,))
    return route_by_hardware(sm, existing_triton=existing)


def route_by_hardware(sm: int | None, *, existing_triton: bool) -> Route:
    """Rule A3.4: no language preference, so the GPU's SM version decides."""
    if sm is None:
        raise RoutingError(
            "the request names no kernel language (TileIR, CuTe DSL, Triton) and no SM version "
            "was given: pass the target GPU's SM version (for example --sm 90) or name a language"
        )
    if sm >= 100:
        if existing_triton:
            return Route("A3.4-blackwell-existing", (TILEIR,))
        return Route("A3.4-blackwell-new", (TRITON, TILEIR), notes=("two-stage TileIR pipeline",))
    if 80 <= sm < 100:
        return Route("A3.4-ampere-hopper", (TRITON,), alternatives=(CUTE,))
    raise RoutingError(
        f"no routing rule covers SM{sm} without a language preference (the rules cover SM80-SM90 "
        "and SM100+): name the kernel language in the request"
    )


def check_delegation(
    target: str, task: str, *, sm: int | None = None, existing_triton: bool = False
) -> Route | None:
    """Accept a delegation, or raise DelegationRefused naming the rule that forbids it.

    `existing_triton` is True when a Triton kernel exists already (given by the user,
    or written by kernel-triton-specialist earlier in the same run: stage one done).
    Returns the route that justified the choice, or None for the cycle's own agents
    (profiler, kernel-designer) which are addressed by launch template, not by domain.
    """
    if target not in DELEGATES:
        raise KbError(f"unknown delegate {target!r}; delegates: {', '.join(DELEGATES)}")
    if target in (PROFILER, KERNEL_DESIGNER):
        _check_language_line(task)
        return None
    existing = existing_triton or mentions_existing_kernel(task)
    try:
        r = route(task, sm=sm, existing_triton=existing)
    except RoutingError:
        # No intent and no hardware: any kernel specialist may take it, but TileIR only
        # starts from an existing Triton kernel.
        if target == TILEIR and not existing:
            raise DelegationRefused(target, "A3-tileir-no-scratch", (TRITON,)) from None
        return None
    allowed = {r.stages[0], *r.alternatives}
    if len(r.stages) == 2 and existing:
        allowed.add(r.stages[1])  # stage one is done: the Triton kernel exists now
    if target in allowed:
        return r
    raise DelegationRefused(target, _forbidding_rule(target, r), tuple(sorted(allowed)))


def _forbidding_rule(target: str, r: Route) -> str:
    """The most specific rule a wrong target breaks."""
    if r.rule in ("A3.2-cute",) and target == TRITON:
        return "A2-cute"
    if r.rule == "A3.3-triton" and target == CUTE:
        return "A2-triton"
    if r.stages[0] == TRITON and TILEIR in r.stages:
        if target == TILEIR:
            return "A3-tileir-no-scratch"
        if target == CUTE:
            return "A4-terminology"
    if r.stages == (TILEIR,) and target == CUTE:
        return "A4-terminology"
    if r.stages == (TILEIR,) and target == TRITON:
        return "A2-tileir"
    if target in KERNEL_SPECIALISTS or target in (PROFILING, CUDA_GRAPH):
        return "A2-domain"
    return r.rule


def _check_language_line(task: str) -> None:
    m = _LANGUAGE_LINE.search(task)
    if m:
        try:
            Language(m.group(1).lower())
        except ValueError:
            known = ", ".join(lang.value for lang in Language)
            raise KbError(f"unknown language {m.group(1)!r} in the task; known: {known}") from None
