"""Which specialist gets a task: the delegation and routing rules as one function.

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
    "cuda-graph": "CUDA Graph capture and replay work goes to perf-torch-cuda-graph-specialist",
    "profiling": "performance validation and measurement go to perf-profiling-specialist",
    "cute-domain": "CuTe DSL tasks go to kernel-cute-specialist, never to kernel-triton-specialist",
    "triton-domain": "Triton kernel tasks go to kernel-triton-specialist, never to kernel-cute-specialist",
    "tileir-domain": "TileIR optimization goes to kernel-tileir-specialist",
    "domain": "the specialist of every delegation must match the domain of the task",
    "tileir-generate": "'generate a TileIR kernel': kernel-triton-specialist FIRST, then kernel-tileir-specialist",
    "tileir-optimize": "'optimize for TileIR': kernel-triton-specialist first if no kernel exists, then kernel-tileir-specialist",
    "tileir-convert": "'convert a Triton kernel to TileIR': kernel-tileir-specialist only (the kernel exists)",
    "tileir-convert-other": "'convert a CuTe (or CUDA, PyTorch...) kernel to TileIR': kernel-triton-specialist FIRST writes the Triton kernel, then kernel-tileir-specialist (TileIR optimizes existing Triton kernels)",
    "cute": "a request that mentions CuTe DSL goes to kernel-cute-specialist",
    "triton": "a request that mentions Triton without TileIR context goes to kernel-triton-specialist",
    "blackwell-new": "no preference, Blackwell (SM100+), new kernel: kernel-triton-specialist FIRST, then kernel-tileir-specialist",
    "blackwell-existing": "no preference, Blackwell (SM100+) with an existing Triton kernel: kernel-tileir-specialist only",
    "ampere-hopper": "no preference, Ampere/Hopper (SM80-SM90): kernel-triton-specialist or kernel-cute-specialist",
    "tileir-no-scratch": "kernel-tileir-specialist only optimizes EXISTING Triton kernels and never writes one from scratch",
    "terminology": "TileIR is NVIDIA's Triton backend for Blackwell and is unrelated to CuTe DSL: a TileIR kernel is Triton + TileIR",
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
#
# Requests come in English, French and Japanese.  Words are matched with ASCII
# boundaries, not `\b`: in Python every kana and kanji is a word character, so
# "TileIRで" has no `\b` after "TileIR".  Each language a request names is then read in
# its context: negated ("not a TileIR one", "sans CuTe", "TileIRではなく"), the source of
# a conversion ("convert the CuTe kernel to TileIR": CuTe is where it comes from), or
# requested.


def _ascii_word(pattern: str) -> str:
    return rf"(?<![A-Za-z0-9])(?:{pattern})(?![A-Za-z0-9])"


_TILEIR = re.compile(_ascii_word(r"tile[\s_-]?ir|nvtriton|enable_tile"), re.IGNORECASE)
# "CuTe" alone counts in its own spelling only ("cute" is also an English word).
_CUTE = re.compile(
    _ascii_word(r"(?i:cute[\s_-]?dsl)|CuTe|CUTE(?=[\s_-]?DSL)|(?i:cutlass[\s_-]?(?:4|dsl))")
    + r"|(?i:(?<![A-Za-z0-9])cute_(?=[A-Za-z0-9]))"  # kbopt's file names: cute_v2.py
)
_TRITON = re.compile(r"(?<![A-Za-z0-9])triton(?![A-Za-z0-9])", re.IGNORECASE)
_CUDA_GRAPH = re.compile(
    r"cuda[\s_-]?graphs?|graphes?\s+cuda|cudagraph|cuda\s*グラフ", re.IGNORECASE
)
# Languages a kernel can be converted FROM that are not Triton: a TileIR request then
# needs a Triton kernel written first.
_OTHER_SOURCE = re.compile(
    _ascii_word(r"cuda(?![\s_-]*graph)|c\+\+|pytorch|torch|numpy|jax|cutile|cu[\s_-]?tile"),
    re.IGNORECASE,
)
_MEASURE = re.compile(
    _ascii_word(
        r"profile|profil\w*|measure\w*|mesur\w*|benchmark\w*|validate|valide\w*|time|timing"
    )
    + r"|計測|測定|プロファイル|ベンチマーク|性能評価|実行時間",
    re.IGNORECASE,
)
# Verbs that make a task a change of code, not a measurement (English, French, Japanese).
_CHANGE = re.compile(
    _ascii_word(
        r"write|writes|generate|create|implement|optimi[sz]e|convert|port|fuse|apply|add|"
        r"rewrite|refactor|tune|change|modify|edit|replace|shrink|grow|increase|reduce|raise|"
        r"lower|set|switch|update|make|speed\s+up|accelerate|improve|translate|migrate"
    )
    + r"|(?<![A-Za-z0-9])(?:écri\w*|ecri\w*|génér\w*|gener\w*|cré\w*|implément\w*|optimis\w*|"
    r"convert\w*|fusion\w*|fusionn\w*|appliqu\w*|ajout\w*|modifi\w*|chang\w*|rédui\w*|"
    r"augment\w*|remplac\w*|ajust\w*|accélér\w*|amélior\w*|port\w*|tradui\w*|réécri\w*)"
    # Japanese nouns of action count as a change when used as a verb (最適化して, not
    # 最適化の前後: "before and after the optimization" is a measurement).
    r"|書い|書く|書き|作っ|増や|減ら|置き換え"
    r"|(?:生成|作成|最適化|高速化|変換|移植|実装|適用|追加|修正|変更|削減|チューニング|融合|改善)"
    r"(?:して|する|し|させ|を(?:して|する|行|お願い)|$)",
    re.IGNORECASE,
)
_CONVERT = re.compile(
    _ascii_word(r"convert\w*|port|ports|porting|ported|translate\w*|migrat\w*|rewrite|porte\w*")
    + r"|(?<![A-Za-z0-9])(?:tradui\w*|réécri\w*|migre\w*)|変換|移植|書き換え|置き換え",
    re.IGNORECASE,
)
_EXISTING = re.compile(
    _ascii_word(r"existing|existant\w*|already|déjà|deja|current")
    + r"|既存|既に|すでに|今ある|現在の|手元の",
    re.IGNORECASE,
)
# A file name starts where a name cannot continue (linear time on a long unbroken word).
_PY_FILE = re.compile(r"(?<![\w./-])[\w./-]{1,255}\.py\b")
_NEGATED_EXISTING = re.compile(
    r"(?<![A-Za-z0-9])(no|without|aucun\w*|sans|pas\s+de)\s+(?:\w+\s+){0,3}"
    r"(existing|existant\w*|exist\w*)"
    r"|(?:カーネル|kernel)\s*(?:は|が)\s*(?:まだ)?\s*(?:ない|無い|ありません|存在しない)",
    re.IGNORECASE,
)
_GENERATE = re.compile(
    _ascii_word(r"generate|write|create|new|from\s+scratch")
    + r"|(?<![A-Za-z0-9])(?:génér\w*|écri\w*|cré\w*|nouveau|nouvelle)"
    r"|生成|作成|新規|新しい|書い|書く|書き|作っ|ゼロから",
    re.IGNORECASE,
)
_LANGUAGE_LINE = re.compile(r"^\s*Language:\s*([A-Za-z-]+)", re.IGNORECASE | re.MULTILINE)
# Negation before a language, at most two words away: "not a TileIR one", "without the
# TileIR backend", "pas de CuTe", "sans TileIR", "instead of Triton".
_NEGATION_BEFORE = re.compile(
    r"(?<![A-Za-z0-9])(?:not|no|without|instead\s+of|rather\s+than|avoid\w*|never|except|"
    r"don'?t|do\s+not|"
    r"pas|sans|plutôt\s+que|au\s+lieu\s+de|jamais|non)"
    r"(?:\s+(?:use|using|utiliser|d'|de|du|en|un|une|a|an|the|le|la|l')?)?"
    r"(?:\s+[^\s,;.!?]+){0,2}\s*$",
    re.IGNORECASE,
)
# Negation after a language (Japanese): "TileIRではなく", "CuTeは使わずに", "TileIR以外".
_NEGATION_AFTER = re.compile(
    r"^\s*(?:の)?\s*(?:カーネル|kernel)?\s*"
    r"(?:ではなく|じゃなく|ではない|じゃない|以外|は使わ|を使わ|は不要|なしで|抜きで|は禁止)",
    re.IGNORECASE,
)
# A conversion's target: "to TileIR", "into a Triton kernel", "en TileIR", "vers CuTe".
_TARGET_BEFORE = re.compile(
    r"(?<![A-Za-z0-9])(?:to|into|en|vers)\s+(?:(?:a|an|the|un|une|le|la|du|kernel|kernels)\s+)*$",
    re.IGNORECASE,
)
# ... and in Japanese after it: "TileIRに変換", "CuTeへ移植", "Tritonカーネルに".
_TARGET_AFTER = re.compile(r"^\s*(?:の)?\s*(?:カーネル)?\s*(?:に|へ)(?!は)")

TRITON_LANG, TILEIR_LANG, CUTE_LANG = "triton", "tileir", "cute"
_LANGUAGE_PATTERNS = ((TILEIR_LANG, _TILEIR), (CUTE_LANG, _CUTE), (TRITON_LANG, _TRITON))


@dataclass(frozen=True)
class Intent:
    """What a request asks for, language by language."""

    requested: frozenset[str]  # languages asked for (the target of a conversion)
    sources: frozenset[str]  # languages a conversion starts from
    negated: frozenset[str]  # languages the request rules out
    other_source: bool  # converting from CUDA, PyTorch... (not a Triton kernel)


def _clause_before(text: str, start: int) -> str:
    before = text[max(0, start - 60) : start]
    cut = max(before.rfind(c) for c in ",;.!?、。；")
    return before[cut + 1 :] if cut >= 0 else before


def read_intent(text: str) -> Intent:
    mentions: list[tuple[str, int, int]] = []
    for lang, pattern in _LANGUAGE_PATTERNS:
        for m in pattern.finditer(text):
            # "nvtriton" and "TileIR" are TileIR, not also Triton.
            if lang == TRITON_LANG and any(s <= m.start() < e for _, s, e in mentions):
                continue
            mentions.append((lang, m.start(), m.end()))
    converting = bool(_CONVERT.search(text))
    negated: set[str] = set()
    targets: set[str] = set()
    named: set[str] = set()
    for lang, start, end in mentions:
        before, after = _clause_before(text, start), text[end : end + 20]
        if _NEGATION_BEFORE.search(before) or _NEGATION_AFTER.match(after):
            negated.add(lang)
            continue
        named.add(lang)
        if converting and (_TARGET_BEFORE.search(before) or _TARGET_AFTER.match(after)):
            targets.add(lang)
    negated -= named  # named positively somewhere else too: not ruled out
    if targets:
        requested, sources = targets, named - targets
    else:
        requested, sources = named, set()
    other = converting and bool(_OTHER_SOURCE.search(text)) and not (sources & {TRITON_LANG})
    return Intent(frozenset(requested), frozenset(sources), frozenset(negated), other)


def mentions_tileir(text: str) -> bool:
    return TILEIR_LANG in read_intent(text).requested


def mentions_cute(text: str) -> bool:
    return CUTE_LANG in read_intent(text).requested


def mentions_triton(text: str) -> bool:
    return TRITON_LANG in read_intent(text).requested


def mentions_existing_kernel(text: str) -> bool:
    """The request says the kernel already exists (or points at its file)."""
    if _NEGATED_EXISTING.search(text):
        return False
    if _EXISTING.search(text) or _CONVERT.search(text):
        return True
    # A file to work on ("add TileIR configs to fused_gelu.py") is an existing kernel,
    # unless the request creates it.
    return bool(_PY_FILE.search(text)) and not _GENERATE.search(text)


def existing_triton_kernel(text: str) -> bool:
    """The request works on a Triton kernel that exists: an existing kernel that is not
    a CuTe, CUDA or PyTorch one being converted (TileIR starts from Triton only)."""
    intent = read_intent(text)
    from_other = bool(intent.sources & {CUTE_LANG}) or intent.other_source
    return mentions_existing_kernel(text) and not from_other


def is_measurement(text: str) -> bool:
    return bool(_MEASURE.search(text)) and not _CHANGE.search(text)


# --------------------------------------------------------------------------- routing


def route(request: str, *, sm: int | None = None, existing_triton: bool = False) -> Route:
    """The specialist stages for a request, decided by the first rule that applies."""
    if _CUDA_GRAPH.search(request):
        return Route("cuda-graph", (CUDA_GRAPH,))
    if is_measurement(request):
        return Route("profiling", (PROFILING,))
    intent = read_intent(request)
    # The kernel that exists is a Triton kernel unless the request converts from CuTe,
    # CUDA, PyTorch... (TileIR optimizes Triton kernels only).
    from_other = bool(intent.sources & {CUTE_LANG}) or intent.other_source
    existing = existing_triton or existing_triton_kernel(request)
    if TILEIR_LANG in intent.requested:
        if from_other and not existing_triton:
            return Route(
                "tileir-convert-other",
                (TRITON, TILEIR),
                notes=("the kernel to convert is not a Triton kernel: write the Triton one first",),
            )
        if existing:
            return Route(
                "tileir-convert", (TILEIR,), notes=("stage one skipped: the Triton kernel exists",)
            )
        rule = "tileir-generate" if _GENERATE.search(request) else "tileir-optimize"
        return Route(rule, (TRITON, TILEIR), notes=("two-stage TileIR pipeline",))
    if CUTE_LANG in intent.requested:
        return Route("cute", (CUTE,))
    if TRITON_LANG in intent.requested:
        return Route("triton", (TRITON,))
    if TILEIR_LANG in intent.negated and TRITON_LANG not in intent.negated:
        # "not TileIR" with no other language: a plain Triton kernel is what remains.
        return Route("triton", (TRITON,), notes=("TileIR ruled out by the request",))
    r = route_by_hardware(sm, existing_triton=existing)
    if intent.negated & {TILEIR_LANG, CUTE_LANG}:
        # The hardware rule, minus what the request rules out.
        keep = tuple(s for s in r.stages if _LANG_OF.get(s) not in intent.negated)
        alts = tuple(s for s in r.alternatives if _LANG_OF.get(s) not in intent.negated)
        if keep:
            return Route(r.rule, keep, alts, (*r.notes, "a language ruled out by the request"))
    return r


_LANG_OF = {TRITON: TRITON_LANG, TILEIR: TILEIR_LANG, CUTE: CUTE_LANG}


def route_by_hardware(sm: int | None, *, existing_triton: bool) -> Route:
    """No language preference, so the GPU's SM version decides."""
    if sm is None:
        raise RoutingError(
            "the request names no kernel language (TileIR, CuTe DSL, Triton) and no SM version "
            "was given: pass the target GPU's SM version (for example --sm 90) or name a language"
        )
    if sm >= 100:
        if existing_triton:
            return Route("blackwell-existing", (TILEIR,))
        return Route("blackwell-new", (TRITON, TILEIR), notes=("two-stage TileIR pipeline",))
    if 80 <= sm < 100:
        return Route("ampere-hopper", (TRITON,), alternatives=(CUTE,))
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
    existing = existing_triton or existing_triton_kernel(task)
    try:
        r = route(task, sm=sm, existing_triton=existing)
    except RoutingError:
        # No intent and no hardware: any kernel specialist may take it, but TileIR only
        # starts from an existing Triton kernel.
        if target == TILEIR and not existing:
            raise DelegationRefused(target, "tileir-no-scratch", (TRITON,)) from None
        return None
    allowed = {r.stages[0], *r.alternatives}
    if len(r.stages) == 2 and existing:
        allowed.add(r.stages[1])  # stage one is done: the Triton kernel exists now
    if target in allowed:
        return r
    raise DelegationRefused(target, _forbidding_rule(target, r), tuple(sorted(allowed)))


def _forbidding_rule(target: str, r: Route) -> str:
    """The most specific rule a wrong target breaks."""
    if r.rule in ("cute",) and target == TRITON:
        return "cute-domain"
    if r.rule == "triton" and target == CUTE:
        return "triton-domain"
    if r.stages[0] == TRITON and TILEIR in r.stages:
        if target == TILEIR:
            return "tileir-no-scratch"
        if target == CUTE:
            return "terminology"
    if r.stages == (TILEIR,) and target == CUTE:
        return "terminology"
    if r.stages == (TILEIR,) and target == TRITON:
        return "tileir-domain"
    if target in KERNEL_SPECIALISTS or target in (PROFILING, CUDA_GRAPH):
        return "domain"
    return r.rule


def _check_language_line(task: str) -> None:
    m = _LANGUAGE_LINE.search(task)
    if m:
        try:
            Language(m.group(1).lower())
        except ValueError:
            known = ", ".join(lang.value for lang in Language)
            raise KbError(f"unknown language {m.group(1)!r} in the task; known: {known}") from None
