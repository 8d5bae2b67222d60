"""Machine-applicable moves: how a catalog entry acts on a kernel's declared knobs.

An optimization entry may say, in its front matter, what it does to the knobs a kernel
spec declares (`kbopt.kernel.Knob`), named by **role**, never by a kernel's own knob
names, so one entry acts on every kernel whose spec gives its knobs roles::

    moves:
      - change: {kv_tile: "x2", pipeline_stages: "-1"}
        when: ["shared_mem_per_block_kb >= 150"]
        note: "a wider KV tile pays for one stage fewer"

`change` maps a role (`ROLES`) to an operation (`OPERATIONS`); `when` holds optional
preconditions on the profile, in the triggers' `metric op value` form.  The catalog
designer (`kbopt cycle --designer catalog`) and `kbopt ablate` apply moves with
`plan_move`:

- every role of the move must name a knob of the version's family (all knobs of that
  role change together), and every one of them must change: a move that changes
  nothing, or only part of what it says, is not applicable;
- a precondition whose metric the profile measured and that does not hold makes the
  move not applicable (unless the caller relaxes preconditions: then it is reported as
  relaxed, for a search that has tried every move whose preconditions hold); one whose
  metric the profile lacks is reported as unchecked, unless the metric is a kernel
  dimension (`row_len`, `kv_len`...): a kernel without that dimension is not the shape
  the move was written for, so it does not apply, unless relaxed (then it comes after
  every move whose failing preconditions were measured);
- a new value is clamped to the knob's allowed values: the allowed value nearest the
  computed one, beyond the current value in the move's direction (`x2` from 32 with
  allowed 16/32/128 gives 128; from 128 it gives nothing: not applicable);
- arithmetic on a value the version does not set, or sets to None ("the kernel
  chooses"), is not applicable, unless the launch recorded the value it chose under the
  knob's name (`launched`): then the move scales that; setting a flag or a value is.

Nothing here imports a kernel or torch.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kbopt.kernel import Knob
    from kbopt.model import Move

# The closed vocabulary of knob roles: what a spec's `Knob.role` says a knob is, and what
# a move acts on.  Kind: "size" (a tile or width, scaled), "count" (stepped), "flag" (set).
ROLES: dict[str, tuple[str, str]] = {
    "tile_m": ("size", "rows of the output tile (the MMA's M)"),
    "tile_n": ("size", "columns of the output tile, or elements of a row per step"),
    "tile_k": ("size", "reduction depth per step (the MMA's K)"),
    "kv_tile": ("size", "KV rows per loop step of an attention kernel"),
    "rows_per_program": ("size", "independent rows (tokens, query rows) per program"),
    "heads_per_program": ("size", "query heads that share one KV read per program"),
    "vector_width": ("size", "elements (or vectors) per thread per access"),
    "grouping": (
        "size",
        "rows of output tiles launched together before the order moves on (L2 reuse)",
    ),
    "warps": ("count", "warps per program"),
    "pipeline_stages": ("count", "software-pipeline depth (buffered loads in flight)"),
    "splits": ("count", "partitions of the reduction axis across programs (split-KV, split-K)"),
    "occupancy": (
        "count",
        "programs per SM asked of the compiler, or a persistent grid's programs (per SM or in all)",
    ),
    "persistent": ("flag", "one wave of programs looping over the work"),
    "tma": ("flag", "tensor-memory-accelerator (descriptor) loads"),
    "warp_specialization": ("flag", "producer and consumer warps"),
    "mma_pipelining": ("flag", "the next tile's MMA issued before this tile's epilogue"),
    "cache_hints": ("flag", "eviction or cache-policy hints on loads and stores"),
}

# Operations (strings in the YAML; a bare YAML true/false/null sets that value):
OPERATIONS = {
    "xN": "multiply by N (x2, x4, x0.5)",
    "/N": "divide by N (/2)",
    "+N": "add N (+1)",
    "-N": "subtract N (-1)",
    "up": "the next larger allowed value",
    "down": "the next smaller allowed value",
    "max": "the largest allowed value",
    "min": "the smallest allowed value",
    "one_wave": "splits: the fewest that give one wave of programs (ctas_per_sm x splits >= 1), "
    "up from fewer or down from more; "
    "without ctas_per_sm, None when the knob allows it (the kernel sizes it to one wave)",
    "=V": "set to V (=64, =true, =none)",
}
_OP_RE = re.compile(
    r"^(?:(?P<mul>[x×*])(?P<mv>\d+(?:\.\d+)?)|/(?P<div>\d+(?:\.\d+)?)"
    r"|(?P<add>[+-]\d+)|(?P<word>up|down|max|min|one_wave)|=(?P<set>.+))$"
)
_FLAG_WORDS = {"true": True, "false": False, "yes": True, "no": False}


def describe_operations() -> str:
    return "; ".join(f"{k}: {v}" for k, v in OPERATIONS.items())


def parse_operation(role: str, op: Any) -> tuple[str, Any]:
    """(kind, argument) of one operation, or ValueError with a message a writer can act on.

    kinds: mul, add, step (+1/-1 along the allowed values), extreme (max/min), one_wave, set.
    """
    if role not in ROLES:
        raise ValueError(
            f"unknown knob role {role!r}; roles: {', '.join(ROLES)} (a kernel spec's Knob.role)"
        )
    kind = ROLES[role][0]
    if isinstance(op, bool) or op is None:
        value: Any = op
        if kind != "flag" and op is not None:
            raise ValueError(f"{role}: {op!r} sets a flag, but {role} is a {kind} role")
        return "set", value
    if isinstance(op, int | float):
        raise ValueError(
            f"{role}: bare number {op!r} is ambiguous (YAML reads +1 as 1): quote a relative "
            f'change ("+1", "-1", "x2") or write "={op}" to set the value'
        )
    if not isinstance(op, str):
        raise ValueError(f"{role}: operation {op!r} is not a string ({describe_operations()})")
    m = _OP_RE.match(op.strip().lower())
    if m is None:
        raise ValueError(f"{role}: unknown operation {op!r}; use one of {describe_operations()}")
    if m["set"] is not None:
        text = m["set"].strip()
        if text in _FLAG_WORDS:
            return "set", _FLAG_WORDS[text]
        if text == "none":
            return "set", None
        try:
            number = float(text)
        except ValueError:
            raise ValueError(
                f"{role}: cannot set {text!r}: use a number, true, false or none"
            ) from None
        if kind == "flag":
            raise ValueError(f"{role} is a flag role: set it with =true or =false")
        return "set", int(number) if number.is_integer() else number
    if kind == "flag":
        raise ValueError(f"{role} is a flag role: only =true / =false (or true/false) apply")
    if m["mul"] is not None or m["div"] is not None:
        factor = float(m["mv"]) if m["mul"] is not None else 1.0 / float(m["div"])
        if factor <= 0 or factor == 1:
            raise ValueError(f"{role}: factor in {op!r} must be positive and not 1")
        return "mul", factor
    if m["add"] is not None:
        delta = int(m["add"])
        if delta == 0:
            raise ValueError(f"{role}: {op!r} changes nothing")
        return "add", delta
    word = m["word"]
    if word == "one_wave":
        if role != "splits":
            raise ValueError(f"{role}: one_wave applies to the splits role only")
        return "one_wave", None
    if word in ("up", "down"):
        return "step", 1 if word == "up" else -1
    return "extreme", word


def shown_op(op: Any) -> str:
    if op is True or op is False:
        return f"={str(op).lower()}"
    if op is None:
        return "=none"
    return str(op)


# ---------------------------------------------------------------------- applying


@dataclass
class KnobChange:
    knob: str
    role: str
    before: Any
    after: Any
    op: str
    known: bool = True  # False: the version leaves the knob at its default (not in source)
    launched: Any = None  # the value a None knob had at launch, which the move scaled

    def text(self) -> str:
        before = _fmt(self.before) if self.known else "default"
        if self.launched is not None:
            before += f" (launched as {_fmt(self.launched)})"
        return f"{self.knob} {before} -> {_fmt(self.after)} ({self.role} {self.op})"


@dataclass
class PlannedMove:
    """A move that applies: the knob values it changes, and what was not checked."""

    move: Move
    changes: list[KnobChange]
    unchecked: list[str] = field(default_factory=list)  # preconditions the profile lacks
    # Preconditions that were measured and do not hold, passed over by a relaxed search.
    relaxed: list[str] = field(default_factory=list)
    # How far those preconditions miss (`precondition_miss`, summed): a relaxed search
    # tries the moves of one entry that miss least first.
    miss: float = 0.0

    @property
    def values(self) -> dict[str, Any]:
        return {c.knob: c.after for c in self.changes}

    @property
    def signature(self) -> frozenset[tuple[str, str, str]]:
        """The knob changes as (knob, before, after): the same change from anywhere."""
        return change_signature(
            {c.knob: c.before for c in self.changes}, {c.knob: c.after for c in self.changes}
        )

    def text(self) -> str:
        shown = ", ".join(c.text() for c in self.changes)
        if self.relaxed:
            shown += f" [preconditions not met: {'; '.join(self.relaxed)}]"
        return shown


@dataclass
class NotApplicable:
    reason: str


def change_signature(
    before: Mapping[str, Any], after: Mapping[str, Any]
) -> frozenset[tuple[str, str, str]]:
    """Knob changes as (knob, before, after) in moves' notation (None, True, 64): equal for
    the same change made from anywhere, and for a move recorded in a run's state file."""
    return frozenset((k, _fmt(before.get(k)), _fmt(v)) for k, v in after.items())


def values_key(values: Mapping[str, Any]) -> frozenset[tuple[str, str]]:
    """A version's knob values in moves' notation, comparable across runs and files."""
    return frozenset((k, _fmt(v)) for k, v in values.items())


def _fmt(v: Any) -> str:
    if v is None:
        return "None"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def launch_equivalents(values: Mapping[str, Any], launched: Mapping[str, Any]) -> set[frozenset]:
    """`values` and each form of it in which knobs left at None are written as the value
    their launch recorded: the same launch as a move can reach it (a knob set back to
    what it ran with while left at None).  A knob the kernel resolves from the others
    resolves the same way when the others launch the same, so these are one measurement."""
    free = [k for k, v in values.items() if v is None and launched.get(k) is not None]
    out = set()
    for n in range(len(free) + 1):
        for chosen in itertools.combinations(free, n):
            out.add(frozenset({**values, **{k: launched[k] for k in chosen}}.items()))
    return out


# What a precondition on a dimension the kernel does not have counts as, in a relaxed
# search's order: more than any measured miss (a factor of e**10), so such moves come last.
NO_DIMENSION_MISS = 10.0


def precondition_miss(value: float, threshold: float) -> float:
    """How far a measured value misses a precondition's threshold, as a ratio on a log
    scale (the absolute natural log of value over threshold): `row_len <= 8192` misses
    by more at 14336 than `row_len >= 16384` does, whatever the metric's unit.  1 when
    either side is not positive (no ratio to take)."""
    if value <= 0 or threshold <= 0:
        return 1.0
    return abs(math.log(value / threshold))


# Why a move on a knob the version leaves at None cannot be planned without a launch that
# recorded the value the kernel chose (the catalog designer names such knobs when it stops).
LEFT_TO_THE_KERNEL = "it is None (the kernel chooses)"

# The names a launch conventionally records a role's value under besides the role itself:
# Triton's own launch arguments, and the split count every split decode here records.
ROLE_RECORD_NAMES: dict[str, tuple[str, ...]] = {
    "warps": ("num_warps",),
    "pipeline_stages": ("num_stages",),
    "splits": ("splits", "num_splits"),
}


def launched_by_knob(knobs: Sequence[Knob], launched: Mapping[str, Any]) -> dict[str, Any]:
    """`launched` (what a version's launch recorded) with each knob's value also under the
    knob's own name, where the launch recorded it under its role's conventional name
    instead (a wrapper's `num_kv_splits` knob recorded as `splits`).  Only for the one knob
    of its role: with several (the warps of a split pass and of its merge), which launch a
    recorded value belongs to is not known."""
    out = dict(launched)
    per_role: dict[str, int] = {}
    for knob in knobs:
        per_role[knob.role] = per_role.get(knob.role, 0) + 1
    for knob in knobs:
        if knob.name in out or not knob.role or per_role[knob.role] != 1:
            continue
        for name in (knob.role, *ROLE_RECORD_NAMES.get(knob.role, ())):
            if name in out:
                out[knob.name] = out[name]
                break
    return out


def plan_move(
    move: Move,
    knobs: Sequence[Knob],
    values: Mapping[str, Any],
    metrics: Mapping[str, float],
    launched: Mapping[str, Any] | None = None,
    *,
    relax: bool = False,
) -> PlannedMove | NotApplicable:
    """The knob values `move` gives a version whose knobs are `knobs` set to `values`.

    `launched`: what the version's launch recorded (`Measurement.launched`); a knob the
    version leaves at None ("the kernel chooses") is scaled from the value it was
    launched with, when the launch recorded it under the knob's name.  `relax`: a
    measured precondition that fails is listed in `relaxed` instead of ruling the move
    out (the second pass of a search whose moves with holding preconditions are spent)."""
    from kbopt.metric_sources import SPEC_METRICS

    unchecked = []
    relaxed = []
    miss = 0.0
    for cond in move.when:
        verdict = cond.holds(metrics)
        if verdict is False:
            shown = _fmt(round(float(metrics[cond.metric]), 3))
            if relax:
                relaxed.append(f"{cond.expression} ({cond.metric}={shown})")
                miss += precondition_miss(float(metrics[cond.metric]), cond.value)
                continue
            return NotApplicable(f"precondition {cond.expression} fails ({cond.metric}={shown})")
        if verdict is None:
            # A kernel dimension the spec does not declare (`row_len` of an attention
            # kernel) is not an unmeasured fact: the move is written for another shape.  A
            # relaxed search (every move with holding preconditions spent) still tries it,
            # after every move whose preconditions were measured: the knob it acts on is
            # the kernel's, and a scan whose only knob is its warps has no other move.
            if cond.metric in SPEC_METRICS:
                if relax:
                    relaxed.append(f"{cond.expression} (the kernel has no {cond.metric})")
                    miss += NO_DIMENSION_MISS
                    continue
                return NotApplicable(
                    f"precondition {cond.expression}: the kernel has no {cond.metric}"
                )
            unchecked.append(cond.expression)
    changes: list[KnobChange] = []
    for role, op in move.change.items():
        matching = [k for k in knobs if k.role == role]
        if not matching:
            return NotApplicable(f"no knob has the role {role}")
        # A kernel of several launches has one knob of a role per launch (the warps of a
        # one-warp serial launch and of a four-warp merge): the move acts on each knob
        # that can take it, and leaves one at its bound as it is, rather than being ruled
        # out by it.  It is not applicable only when no knob of the role can move.
        refused: list[NotApplicable] = []
        for knob in matching:
            known = knob.name in values
            current = values.get(knob.name)
            chosen = (launched or {}).get(knob.name) if current is None else None
            if isinstance(chosen, bool) or not isinstance(chosen, int | float):
                chosen = None
            start = current if chosen is None else chosen
            after = _apply(
                parse_operation(role, op), knob, start, known or chosen is not None, metrics
            )
            if isinstance(after, NotApplicable):
                refused.append(NotApplicable(f"{knob.name}: {after.reason}"))
                continue
            covered = _tile_covers_the_problem(role, start, after, metrics)
            if covered is not None:
                refused.append(NotApplicable(f"{knob.name}: {covered.reason}"))
                continue
            changes.append(
                KnobChange(knob.name, role, current, after, shown_op(op), known, launched=chosen)
            )
        if len(refused) == len(matching):
            return refused[0]
    return PlannedMove(move, changes, unchecked, relaxed, miss)


# The problem's extent along the axis a tile role spans, as the spec's dims give it.
_TILE_EXTENT = {"tile_n": "row_len", "tile_m": "rows"}


def _tile_covers_the_problem(
    role: str, start: Any, after: Any, metrics: Mapping[str, float]
) -> NotApplicable | None:
    """A wider tile when the tile already spans the problem along its axis (`tile_n`
    against the row, `tile_m` against the rows): the extra lanes or rows are all masked
    off, so the move adds no load in flight and no useful MMA rows, only idle lanes and
    registers (the tutorial layer norm and Liger's cross-entropy both lost time to a row
    tile widened past the row on the H200, results/ablation/20261203T17*.json; the
    tutorial matmul at 64 rows lost a trial to a 256-row tile)."""
    extent_metric = _TILE_EXTENT.get(role)
    extent = metrics.get(extent_metric) if extent_metric else None
    if extent is None or not isinstance(start, int | float) or isinstance(start, bool):
        return None
    if not isinstance(after, int | float) or after <= start:
        return None
    if float(start) >= float(extent):
        return NotApplicable(f"{_fmt(start)} already covers {extent_metric}={_fmt(extent)}")
    return None


def _numeric(knob: Knob) -> list[float]:
    return sorted(
        float(v) for v in knob.values if isinstance(v, int | float) and not isinstance(v, bool)
    )


def _typed(knob: Knob, v: float) -> Any:
    return round(v) if knob.type == "int" else float(v)


def _apply(
    parsed: tuple[str, Any], knob: Knob, current: Any, known: bool, metrics: Mapping[str, float]
) -> Any:
    kind, arg = parsed
    if kind == "set":
        value = knob.coerce(arg) if isinstance(arg, str) else arg
        if knob.type == "float" and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not knob.admits(value):
            return NotApplicable(f"{_fmt(value)} is not an allowed value {list(knob.values)}")
        if known and current == value and type(current) is type(value):
            return NotApplicable(f"already {_fmt(value)}")
        return value
    if knob.type not in ("int", "float"):
        return NotApplicable(f"a {knob.type} knob cannot be {kind}-changed")
    allowed = _numeric(knob)
    if kind == "one_wave":
        ctas = metrics.get("ctas_per_sm")
        if ctas is None or ctas <= 0:
            if None in knob.values and (not known or current is not None):
                return None  # "let the kernel choose": sized to one wave from the SM count
            return NotApplicable("ctas_per_sm unknown and the knob cannot be left to the kernel")
        if not known or current is None or isinstance(current, bool):
            return NotApplicable("the version does not set a number to scale")
        target = float(current) / float(ctas)
        enough = [v for v in allowed if v >= target]  # the fewest that fill one wave
        if target > float(current):
            if enough:
                return _typed(knob, enough[0])
            return _snap(knob, allowed, float(current), target, up=True)  # as close as allowed
        # More than one wave already: the fewest splits that still fill it, when fewer
        # than now (each split costs a partial write and its share of the combine).
        if enough and enough[0] < float(current):
            return _typed(knob, enough[0])
        return NotApplicable(f"already the fewest that fill one wave (ctas_per_sm={ctas:.2f})")
    if kind == "extreme":
        if not allowed:
            return NotApplicable("no allowed values to choose the extreme of")
        value = allowed[-1] if arg == "max" else allowed[0]
        if known and current is not None and float(current) == value:
            return NotApplicable(f"already {_fmt(current)}")
        return _typed(knob, value)
    if not known or current is None or isinstance(current, bool):
        return NotApplicable("the version does not set it" if not known else LEFT_TO_THE_KERNEL)
    cur = float(current)
    if kind == "step":
        beyond = [v for v in allowed if (v > cur if arg > 0 else v < cur)]
        if not beyond:
            return NotApplicable(
                f"{_fmt(current)} is already the {'largest' if arg > 0 else 'smallest'}"
            )
        return _typed(knob, beyond[0] if arg > 0 else beyond[-1])
    target = cur * arg if kind == "mul" else cur + arg
    if not math.isfinite(target) or target == cur:
        return NotApplicable("changes nothing")
    return _snap(knob, allowed, cur, target, up=target > cur)


def _snap(knob: Knob, allowed: list[float], cur: float, target: float, *, up: bool) -> Any:
    """The allowed value nearest `target` beyond `cur` in the move's direction."""
    if not allowed:  # any value allowed
        value = _typed(knob, target)
        return value if float(value) != cur else NotApplicable("changes nothing")
    beyond = [v for v in allowed if (v > cur if up else v < cur)]
    if not beyond:
        return NotApplicable(
            f"{_fmt(cur)} is already the {'largest' if up else 'smallest'} allowed value"
        )
    best = min(beyond, key=lambda v: (abs(v - target), abs(v - cur)))
    return _typed(knob, best)


def unknown_roles(knobs: Sequence[Knob]) -> list[str]:
    """Roles a spec gives its knobs that no move can name (a typo, or a new role)."""
    return sorted({k.role for k in knobs if k.role and k.role not in ROLES})
