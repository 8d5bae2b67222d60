"""Tuning inside a budget: a few manual tiles first, then a coarse, pruned autotune.

The rule: test a few promising manual tile configurations and see how
performance moves with tile size; autotune coarsely only when needed, with the space cut
down by domain knowledge and a short budget (under one hour per kernel version); tune
finely only versions with real promise.  Its bad example, `mla_var6_plus_v3`, ran 10,000
autotune configurations for no significant gain over `mla_var6_plus_v2`: kernel design
matters more than autotuning.  So this module refuses, before running anything:

- a parameter given as an open range (`BLOCK_N=16..256` with no step): unbounded sweep;
- a space larger than `MAX_CONFIGS` after pruning;
- a plan whose estimated time (configs x seconds per config, measured on the manual tiles)
  exceeds the budget;
- a budget above one hour, unless the version is declared promising (fine tuning).

While running, it stops at the budget even if the estimate was wrong.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kbopt.comma_items import comma_items
from kbopt.errors import KbError, VersionFailed

ParamValue = int | float | str
Params = dict[str, ParamValue]
MAX_CONFIGS = 256
DEFAULT_BUDGET_S = 3600.0  # "under one hour per kernel version"


@dataclass(frozen=True)
class PruneRule:
    """A domain rule: configurations for which `keep` is False are not worth timing."""

    description: str
    keep: Callable[[Params], bool]


def _value(text: str) -> ParamValue:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_param(text: str) -> tuple[str, list[ParamValue]]:
    """`BLOCK_N=32,64,128` or `BLOCK_N=16..256:x2` (powers-of-two steps); open ranges refused."""
    name, sep, values = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise KbError(f"tuning parameter {text!r} is not NAME=v1,v2,... (e.g. BLOCK_N=32,64,128)")
    values = values.strip()
    if ".." in values:
        lo_hi, _, step = values.partition(":")
        lo_text, _, hi_text = lo_hi.partition("..")
        if not step:
            raise KbError(
                f"{name}: an open range {values!r} is an unbounded sweep; list values or give a "
                "step (e.g. 16..256:x2)"
            )
        try:
            lo, hi = int(lo_text), int(hi_text)
            factor = int(step[1:]) if step.startswith("x") else 0
            inc = 0 if step.startswith("x") else int(step)
        except ValueError:
            raise KbError(
                f"{name}: {values!r} is not a range of integers LO..HI:xFACTOR or LO..HI:STEP "
                "(e.g. 16..256:x2 or 1..4:1)"
            ) from None
        if lo > hi:
            raise KbError(f"{name}: the range {lo}..{hi} runs backwards; write {hi}..{lo}:{step}")
        if step.startswith("x"):
            if factor < 2 or lo < 1:
                raise KbError(f"{name}: a multiplicative step needs x2 or more and a start >= 1")
            seq, v = [], lo
            while v <= hi:
                seq.append(v)
                v *= factor
            return name, list(seq)
        if inc < 1:
            raise KbError(f"{name}: the step must be at least 1")
        count = (hi - lo) // inc + 1
        if count > MAX_CONFIGS:  # a sweep may not have more configurations in all
            raise KbError(
                f"{name}: the range {values!r} gives {count:,} values, more than the "
                f"{MAX_CONFIGS} configurations a sweep may have: take a larger step"
            )
        return name, list(range(lo, hi + 1, inc))
    parsed = [_value(v) for v in comma_items(values, f"{name}: {values!r}", "values")]
    if not parsed:
        raise KbError(f"{name}: no values given")
    return name, parsed


@dataclass
class TuneSpace:
    params: dict[str, list[ParamValue]]
    rules: list[PruneRule] = field(default_factory=list)

    def configs(self) -> list[Params]:
        names = list(self.params)
        out = []
        for combo in itertools.product(*(self.params[n] for n in names)):
            cfg = dict(zip(names, combo, strict=True))
            if all(rule.keep(cfg) for rule in self.rules):
                out.append(cfg)
        return out

    @property
    def raw_size(self) -> int:
        return math.prod(len(v) for v in self.params.values()) if self.params else 0


@dataclass(frozen=True)
class TuneBudget:
    seconds: float = DEFAULT_BUDGET_S
    max_configs: int = MAX_CONFIGS
    promising: str = ""  # why a version deserves fine tuning beyond one hour

    def check(self) -> None:
        if self.seconds <= 0:
            raise KbError("the tuning budget must be positive")
        if self.seconds > DEFAULT_BUDGET_S and not self.promising.strip():
            raise KbError(
                f"a tuning budget of {self.seconds / 60:.0f} min exceeds one hour per kernel "
                "version; fine tuning needs a stated reason the version is promising "
                "(--promising)"
            )


@dataclass(frozen=True)
class TunePlan:
    configs: list[Params]
    seconds_per_config: float
    estimate_s: float


def plan_autotune(space: TuneSpace, budget: TuneBudget, seconds_per_config: float) -> TunePlan:
    """The coarse sweep, or a KbError saying why it would be an unbounded one."""
    budget.check()
    configs = space.configs()
    if not configs:
        raise KbError("the pruned tuning space is empty: loosen a rule or add values")
    if len(configs) > budget.max_configs:
        raise KbError(
            f"{len(configs)} configurations after pruning (of {space.raw_size}) exceed the cap of "
            f"{budget.max_configs}: prune with domain knowledge first (anti-pattern "
            "`autotune-sweep-without-design-change`: mla_var6_plus_v3 ran 10,000 configurations "
            "for no significant gain over mla_var6_plus_v2)"
        )
    estimate = len(configs) * seconds_per_config
    if estimate > budget.seconds:
        raise KbError(
            f"{len(configs)} configurations x {seconds_per_config:.1f} s = {estimate / 60:.1f} min "
            f"exceed the budget of {budget.seconds / 60:.1f} min: prune the space or shorten it"
        )
    return TunePlan(configs, seconds_per_config, estimate)


@dataclass
class TuneRow:
    params: Params
    phase: str  # "manual" | "autotune"
    duration_us: float | None
    seconds: float
    error: str = ""


@dataclass
class TuneReport:
    rows: list[TuneRow]
    stopped_by_budget: bool
    plan: TunePlan | None

    @property
    def best(self) -> TuneRow | None:
        ok = [r for r in self.rows if r.duration_us is not None]
        return min(ok, key=lambda r: r.duration_us or math.inf) if ok else None

    def sensitivity(self) -> dict[str, dict[str, float]]:
        """Best duration per value of each parameter: how performance moves with it."""
        out: dict[str, dict[str, float]] = {}
        for row in self.rows:
            if row.duration_us is None:
                continue
            for name, value in row.params.items():
                slot = out.setdefault(name, {})
                key = str(value)
                slot[key] = min(slot.get(key, math.inf), row.duration_us)
        return out

    def as_dict(self) -> dict[str, object]:
        best = self.best
        return {
            "rows": [r.__dict__ for r in self.rows],
            "best": best.__dict__ if best else None,
            "stopped_by_budget": self.stopped_by_budget,
            "planned_configs": len(self.plan.configs) if self.plan else 0,
            "estimate_s": self.plan.estimate_s if self.plan else 0.0,
            "sensitivity": self.sensitivity(),
        }


def _params_key(params: Params) -> tuple[tuple[str, str], ...]:
    """One configuration's identity, whatever the order of its knobs."""
    return tuple(sorted((k, str(v)) for k, v in params.items()))


def tune(
    measure: Callable[[Params], float],
    *,
    manual: Sequence[Params],
    space: TuneSpace | None = None,
    budget: TuneBudget | None = None,
    seconds_per_config: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    warm: Callable[[Sequence[Params], float], object] | None = None,
    warm_width: int = 8,
    progress: Callable[[TuneRow, int, int], None] | None = None,
) -> TuneReport:
    """Manual tiles first; then, if a space is given, the coarse autotune within the budget.

    `warm(configs, deadline)` (a `kbopt.bench.warm_compile.CompileWarmer`'s, where given)
    compiles configurations before they are measured, `warm_width` at a time: the manual
    tiles together, then the autotune's in the order they will be measured.
    `progress(row, n, total)` hears of each row as it is measured, the n-th of its phase's
    total."""
    budget = budget or TuneBudget()
    budget.check()
    if not manual:
        raise KbError("give a few manual tile configurations first, e.g. --manual BLOCK_N=64")
    keys = [_params_key(params) for params in manual]
    for params, key in zip(manual, keys, strict=True):
        if keys.count(key) > 1:  # measuring it twice would spend the budget to learn nothing
            shown = ",".join(f"{k}={v}" for k, v in params.items())
            raise KbError(f"--manual {shown} is given twice")
    start = clock()
    rows: list[TuneRow] = []
    seen: set[tuple[tuple[str, str], ...]] = set()

    def run(params: Params, phase: str, n: int, total: int) -> None:
        t0 = clock()
        try:
            duration: float | None = float(measure(params))
            error = ""
        except VersionFailed as exc:  # raises at these parameters (does not fit): a data point
            duration, error = None, str(exc)
        except KbError:
            raise
        except Exception as exc:  # a config that does not compile or fit is a data point
            duration, error = None, f"{type(exc).__name__}: {exc}"
        rows.append(TuneRow(dict(params), phase, duration, clock() - t0, error))
        seen.add(_params_key(params))
        if progress is not None:
            progress(rows[-1], n, total)

    deadline = start + budget.seconds
    if warm is not None:
        warm(list(manual), deadline)
    for i, params in enumerate(manual, 1):
        run(params, "manual", i, len(manual))
    if space is None:
        return TuneReport(rows, False, None)
    per_config = seconds_per_config
    if per_config is None:
        per_config = max(sum(r.seconds for r in rows) / len(rows), 1e-3)
    plan = plan_autotune(space, budget, per_config)
    stopped = False
    todo = [params for params in plan.configs if _params_key(params) not in seen]
    for i, params in enumerate(todo):
        if clock() - start >= budget.seconds:
            stopped = True
            break
        if warm is not None and i % warm_width == 0:
            warm(todo[i : i + warm_width], deadline)
        run(params, "autotune", i + 1, len(todo))
    return TuneReport(rows, stopped, plan)
