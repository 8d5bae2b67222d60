"""`kbopt ablate`: does the catalog choose well?  Three searches over one knob space at an
equal budget of measured trials.

All arms start from the same version and its knob values (what its file sets), measure
at one trial configuration, and count every measurement as a trial, the starting point
included (trial 1, measured once and shared).  A configuration that does not compile,
fails its correctness check or runs out of memory is a trial too, recorded with why.

- `catalog`: the catalog designer's loop without writing files.  Profile the current
  values (timing-only: the measurement's metrics, the launch statistics of its Triton
  kernels and the spec's shape metrics), rank the catalog for it
  (`kbopt.strategy.recommend`, the family's language; each fired anti-pattern's way out
  first, then the other moves by what each found in the project's earlier measured
  ablations, `kbopt.workflow.move_record`, the ranking's order breaking ties), apply the top
  applicable move that leads to knob values the arm has not measured and was not already
  rolled back (`kbopt.workflow.catalog_designer.search_candidates`: moves whose
  preconditions fail only once none whose preconditions hold is left), measure, keep it
  unless it is wrong or more than 5% slower (the cycle's rule), else go back.  A move kept
  while more than 1% slower than the arm's best (`PLATEAU_PCT`) is not where the next move
  starts while a move is open from the best values: the walk returns there, and the slower
  values wait among the kept states for a later backtrack.  Once no
  ranked entry has a move left it goes on with the entries the ranking left out
  (`with_unranked`: the random arm's pool, in order of bottleneck class and expected
  gain), so both arms draw on the same moves.  When no move is left from the current
  values (kept moves within the tolerance can wander a plateau), it goes on from the
  fastest values it has measured.  When none is left from there either, it goes back to
  the values it kept before, latest first, and searches on from the first that still has
  a move (a first win can lead away from the best region: on the H200, FlagGems' argmax
  grew its tile twice while the grid's best was a smaller tile with fewer warps).  On such
  a branch a move is kept when it is not more than 5% slower than the branch's current
  values, and the moves rolled back elsewhere may be tried from there; it stops early only
  when no kept values have a move left.
  A move kept without being faster marks its direction (a knob raised, or lowered): the
  same direction again waits behind every other move until some move is faster.  A move
  more than 1% faster than the arm's best is pushed once more (the same directions go
  first from the values it reached, as in a pattern search, even by a move whose
  measured preconditions fail), and the directions that would undo it go after every
  other move.  A move that only resizes a tile (or the rows per program) and is measured
  slower is tried next with the warps scaled by the same factor, once
  (`kbopt.workflow.search_pairing`).
- `random`: the same entries' moves (every optimization and anti-pattern in scope that
  declares moves), with the same applicability rules (the same two passes), keep / go
  back, back-to-the-best, no-retry, flat-direction, push-on, warps-alongside and
  go-on-from-the-fastest rules, picked in a random order instead of the ranking's.
- `grid`: what an autotuner does: the product of every knob's allowed values, sampled
  without replacement (or all of it, in a random order, when it fits the budget).

Knob values are applied per measurement as `params` (the backends' `measure(...,
params)`, as `kbopt tune` does), so nothing is written to the kernel's folder or to
the catalog.  A configuration reached twice (by two arms, or twice by one) is measured
once per run and reused; it still counts as a trial of each arm that reached it.

Compilation is not a trial but it is wall time: a Triton kernel compiles on its first call
at each configuration, 10 to 40 s for some, so a budget can buy two or three trials.  With a
`warmer` (`kbopt ablate`'s default with the real backend), each round first compiles in
parallel worker processes what the arms are about to measure: each arm's next
configuration, then the ones after it (the grid's next points, the walks' next moves if the
first goes back), as many as there are workers (`kbopt.bench.warm_compile`).  What is
measured, and in which order, is the same with or without it.

Each trial of a walking arm records `from_metrics`: the metrics of the values it moved from
that a catalog condition reads (`condition_metrics`), so what a move found can later be set
against the conditions it was chosen under; and `momentum`, the search rule that placed the
move if one did (`search_momentum`), so each rule's moves can be counted apart.

Per arm the result row has `best_pct_of_floor` and `trials_to_within_5pct`: the first
trial at which the arm's best time so far is within 5% of the best time any arm found.
The grid's row also has `expected_trials_to_within_5pct`: what a random grid sample needs
on average, from the share of its own points within 5% (one sample's count is one draw).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import random
import re
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kbopt.bench.backend import Measurement, MeasurementBackend, measure_with_backoff
from kbopt.bench.trials import TrialConfig
from kbopt.bench.warm_compile import WarmStats
from kbopt.contracts.profile import Profile
from kbopt.errors import KbError
from kbopt.kernel import KernelSpec, Knob
from kbopt.moves import NotApplicable, PlannedMove, launch_equivalents, plan_move
from kbopt.store import Store
from kbopt.workflow.catalog_designer import (
    candidates,
    family_language,
    in_scope_with_moves,
    search_candidates,
    search_order,
)
from kbopt.workflow.move_record import candidate_score, place_pair, record_for
from kbopt.workflow.search_momentum import PLATEAU_PCT, Momentum, directions
from kbopt.workflow.search_pairing import out_of_shared_memory, stages_alongside, untried_pair

ARMS = ("catalog", "random", "grid")
# A move is kept unless it is more than 5% slower than the fastest values the arm has
# measured (a neutral move may enable the next one; a chain of them may not drift).
KEEP_SLOWDOWN_PCT = 5.0
WITHIN_PCT = 5.0
RESULTS_DIR = Path("results") / "ablation"


@dataclass
class TrialRow:
    """One measured trial of one arm."""

    n: int
    values: dict[str, Any]
    status: str  # ok | wrong | error
    duration_us: float | None = None
    pct_of_floor: float | None = None
    move: str = ""  # catalog / random: the entry and the knob change
    # catalog / random: kept (not more than 5% slower than the best): values the walk goes
    # on from, at once when faster than its best, else now or later (`PLATEAU_PCT`)
    kept: bool | None = None
    note: str = ""
    best_us: float | None = None  # the arm's best correct time so far
    # catalog / random: what the catalog's conditions read of the values the move started
    # from (`condition_metrics`), so a precondition's threshold can later be set against
    # what its moves found (scripts/move_outcomes.py)
    from_metrics: dict[str, float] = field(default_factory=dict)
    # catalog / random: the search rule that placed the move, if any (`Momentum.rule`:
    # "push on", "the other way", "undoes a win", "flat", "lost badly before"), so each
    # rule can be judged
    momentum: str = ""


@dataclass
class ArmResult:
    arm: str
    trials: list[TrialRow] = field(default_factory=list)
    stopped: str = ""  # why the arm ran fewer trials than the budget

    def best(self) -> TrialRow | None:
        ok = [t for t in self.trials if t.status == "ok" and t.duration_us is not None]
        return min(ok, key=lambda t: t.duration_us or 0.0) if ok else None


class Lab:
    """Measures knob values of one version at one configuration, once each."""

    def __init__(
        self,
        backend: MeasurementBackend,
        spec: KernelSpec,
        version: str,
        config: TrialConfig,
        file_values: Mapping[str, Any],
    ):
        self.backend, self.spec, self.version, self.config = backend, spec, version, config
        self.file_values = dict(file_values)
        self.cache: dict[frozenset, tuple[Measurement | None, str]] = {}
        self.first: Measurement | None = None  # provenance of the run
        self.recorded: frozenset[str] = frozenset()  # metrics a walking trial records
        self.start_repeat_us: float | None = None  # the start measured a second time
        # The starting values' profile with hardware counters (`kbopt profile`, measured
        # before the run: `start_profile`), and the measurement it stands for: the walks
        # rank from it at those values, as `kbopt recommend` ranks that profile.
        self.start_profile: Profile | None = None
        self.start_measurement: Measurement | None = None

    def measure(
        self, values: Mapping[str, Any], *, again: bool = False
    ) -> tuple[Measurement | None, str]:
        """Measure `values` (once: a second call returns the first result, unless `again`,
        which measures anew and leaves the cached result as it was)."""
        key = frozenset(values.items())
        if key in self.cache and not again:
            return self.cache[key]
        params = {
            k: v for k, v in values.items() if k not in self.file_values or self.file_values[k] != v
        }
        try:
            m: Measurement | None = measure_with_backoff(
                self.backend, self.spec, self.version, self.config, params or None
            )
            err = (
                ""
                if m is not None and m.correct
                else f"wrong result (error {m.error if m else '?'})"
            )
        except Exception as exc:  # a configuration that does not compile, run or fit
            m, err = None, f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        if m is not None and self.first is None:
            self.first = m
        if not again:
            self.cache[key] = (m, err)
        return m, err


def _row(n: int, values: Mapping[str, Any], m: Measurement | None, err: str) -> TrialRow:
    if m is None:
        return TrialRow(n, dict(values), "error", note=err)
    return TrialRow(
        n,
        dict(values),
        "ok" if m.correct else "wrong",
        duration_us=round(m.duration_us, 3),
        pct_of_floor=round(m.pct_of_floor, 2) if m.pct_of_floor is not None else None,
        note=err,
    )


class _Walk:
    """The catalog and random arms: move from the current values, keep or go back."""

    def __init__(self, arm: str, lab: Lab, start: TrialRow, start_m: Measurement):
        self.result = ArmResult(arm, [start])
        self.lab = lab
        self.values = dict(start.values)
        self.current = start_m
        # The fastest this arm has measured: a move is judged against it, not against the
        # current values, so a run of small losses each within the tolerance cannot add up.
        self.best_values, self.best_m = dict(self.values), start_m
        # Every knob configuration this arm has measured, with the forms that launch the
        # same (launch_equivalents): a move back to one of them (one entry undoing
        # another's change) costs a trial and teaches nothing.
        self.visited: set[frozenset] = launch_equivalents(self.values, start_m.launched)
        # Knob changes measured and rolled back: not proposed again from elsewhere (a move
        # that lost once is not retried after an unrelated change was kept).
        self.rejected: set[frozenset] = set()
        self._open: list[tuple[str, PlannedMove]] | str | None = None
        # What the measurements say about directions (knob raised or lowered): a clear
        # win is pushed once more (half the warps was found five trials after it first
        # won on the H200), its undoing waits, and a direction kept without being faster
        # goes last (one more pipeline stage three times over spent three trials of 24).
        self.momentum = Momentum()
        # A resize just measured slower, with the warps scaled alike (`search_pairing`):
        # the next move tried, once.
        self.paired: tuple[str, PlannedMove] | None = None
        # A grown tile that did not fit in shared memory, with one stage fewer
        # (`search_pairing.stages_alongside`): the next move tried, once.
        self.refit: tuple[str, PlannedMove] | None = None
        self._profiled: tuple[Measurement, Any] | None = None  # (state, its profile)
        # Every kept state, in order (trial number, values, measurement): where the walk
        # goes back to once no move is left from its best values (`_backtrack`).
        self.kept: list[tuple[int, dict[str, Any], Measurement]] = [(1, dict(self.values), start_m)]
        # On a branch from an earlier state a move is judged against the branch's current
        # values, not against the best: the branch must be able to descend.
        self.branching = False
        # Set when a move kept below the best sent the walk back to the best values: the
        # label of the next move says where it starts from.
        self._from_best = False
        # The best values from which the rolled-back changes were opened again (`_reopen`).
        self._reopened: set[frozenset] = set()

    @property
    def best_us(self) -> float:
        """The fastest time this arm has measured (its best values')."""
        return float(self.best_m.duration_us)

    def options(self) -> list[tuple[str, PlannedMove]] | str:
        """The moves open from the current values, in the arm's order (or why none is)."""
        raise NotImplementedError

    def relaxed_options(self) -> list[tuple[str, PlannedMove]]:
        """Every move open from the current values, preconditions passed over, in the
        arm's order (what `options` returns only once nothing else is left)."""
        raise NotImplementedError

    def pick(self, options: list[tuple[str, PlannedMove]]) -> tuple[str, PlannedMove]:
        return options[0]

    def place_pair(
        self, pair: tuple[str, PlannedMove], rest: list[tuple[str, PlannedMove]]
    ) -> list[tuple[str, PlannedMove]]:
        """Where the resize repeated with the warps scaled alike goes: next."""
        return [pair, *rest]

    def profile(self) -> Any:
        """The timing-only profile of the current values: what the ranking reads.  With
        the spec, as `kbopt profile` writes it: its contexts keep attention-only entries
        off a norm, and its minimal bytes and FLOPs give the arithmetic intensity."""
        from kbopt.workflow.profiler import build_profile

        if self.lab.start_profile is not None and self.current is self.lab.start_measurement:
            # At the starting values, the profile with counters (re-reads, stalls, bank
            # conflicts) that a timing-only profile cannot give.
            return self.lab.start_profile
        # Built once per measured state: the ranked moves, the relaxed ones and the pairing
        # all read the same values' profile.
        if self._profiled is None or self._profiled[0] is not self.current:
            profile, _ = build_profile(
                self.current, None, "timing only (kbopt ablate)", self.lab.spec
            )
            self._profiled = (self.current, profile)
        return self._profiled[1]

    def metrics(self, profile: Any = None) -> dict[str, float]:
        """What the moves' preconditions read: `profile`'s metrics (the current values'
        by default) with the spec's dims."""
        from kbopt.strategy import trigger_metrics

        return trigger_metrics(profile if profile is not None else self.profile())

    def recorded_metrics(self) -> dict[str, float]:
        """The current values' metrics that a catalog condition reads, to 4 significant
        digits: what a trial moving from here records."""
        return {
            k: float(f"{float(v):.4g}")
            for k, v in sorted(self.metrics().items())
            if k in self.lab.recorded and isinstance(v, int | float) and math.isfinite(v)
        }

    def _options(self) -> list[tuple[str, PlannedMove]] | str:
        # Ranked once per state: `upcoming` and the step that follows it ask the same.
        if self._open is None:
            found = self.options()
            if isinstance(found, str):
                self._open = found
            else:
                # A push goes on even where the move's measured preconditions no longer
                # hold: the measurement, not the threshold, says the direction pays.
                moves = self.momentum.with_pushes(found, self.relaxed_options, lambda o: o[1])
                self._open = self.momentum.order(moves, lambda o: o[1])
            if self.paired is not None:
                rest = [] if isinstance(self._open, str) else self._open
                self._open = self.place_pair(self.paired, rest)
                self.paired = None
            if self.refit is not None:
                rest = [] if isinstance(self._open, str) else self._open
                self._open = [self.refit, *rest]
                self.refit = None
        return self._open

    def choose(self) -> tuple[str, PlannedMove] | str:
        found = self._options()
        return found if isinstance(found, str) else self.pick(found)

    def upcoming(self, count: int) -> list[dict[str, Any]]:
        """The knob values of the first `count` moves open from here: what the next step
        measures, and what it would measure next if that one went back."""
        if self.result.stopped:
            return []
        found = self._options()
        if isinstance(found, str):
            return []
        return [{**self.values, **planned.values} for _, planned in found[:count]]

    def step(self, n: int) -> bool:
        choice = self.choose()
        if isinstance(choice, str) and self.values != self.best_values:
            # Kept moves within the tolerance can wander along a plateau to values from
            # which every move leads somewhere measured; the search goes on from the
            # fastest values it has found before it gives up (a move from there, such as
            # halving the warps once more, may not have been reachable from here).
            self.values, self.current = dict(self.best_values), self.best_m
            self._open = None
            choice = self.choose()
            if not isinstance(choice, str):
                choice = (f"from the best so far, {choice[0]}", choice[1])
        elif not isinstance(choice, str) and self._from_best:
            choice = (f"from the best so far, {choice[0]}", choice[1])
        self._from_best = False
        if isinstance(choice, str):
            choice = self._backtrack() or self._reopen() or choice
        if isinstance(choice, str):
            self.result.stopped = choice
            return False
        label, planned = choice
        new = {**self.values, **planned.values}
        self._open = None  # whatever happens next, the state changes
        self.visited.add(frozenset(new.items()))
        m, err = self.lab.measure(new)
        if m is not None:
            self.visited |= launch_equivalents(new, m.launched)
        row = _row(n, new, m, err)
        row.move = f"{label}: {planned.text()}"
        row.from_metrics = self.recorded_metrics()
        row.momentum = self.momentum.rule(planned)
        judged_against = float(self.current.duration_us) if self.branching else self.best_us
        slower = (
            m is not None
            and (m.duration_us - judged_against) / judged_against * 100 > KEEP_SLOWDOWN_PCT
        )
        row.kept = m is not None and m.correct and not slower
        if m is not None:
            gain = (self.best_us - m.duration_us) / self.best_us * 100
            self.momentum.measured(directions(planned), bool(row.kept), gain)
        else:
            self.momentum.measured((), False, 0.0)
        if row.kept and m is not None:
            self.values, self.current = new, m
            self.kept.append((n, dict(new), m))
            if m.duration_us < self.best_us:
                self.best_values, self.best_m = dict(new), m
                self.branching = False  # the branch found better: it is the main path now
            elif not self.branching and m.duration_us > self.best_us * (1 + PLATEAU_PCT / 100):
                self._back_to_the_best()
        else:
            self.rejected.add(planned.signature)
            if m is not None and m.correct:
                self._pair(label, planned)
            elif m is None and out_of_shared_memory(err):
                self._refit(label, planned)
        self.result.trials.append(row)
        return True

    def _back_to_the_best(self) -> None:
        """After a move kept while more than `PLATEAU_PCT` slower than the best: move the
        walk back to the best values when a move is open there, else stay.  The slower
        values stay among the kept states, which `_backtrack` returns to once the best
        values have no move left (a branch judged against its own values)."""
        here = (self.values, self.current)
        self.values, self.current = dict(self.best_values), self.best_m
        self._open = None
        if isinstance(self._options(), str):
            self.values, self.current = here
            self._open = None
        else:
            self._from_best = True

    def _backtrack(self) -> tuple[str, PlannedMove] | None:
        """The first move open from the values kept before, latest first (skipping the
        best and the current values, already searched), with the walk moved there; None
        when no kept values have a move left.  The directions measured elsewhere do not
        order the moves from there, and the changes rolled back elsewhere may pay there."""
        for n, values, m in reversed(self.kept):
            if values in (self.best_values, self.values):
                continue
            self._search_afresh_from(values, m)
            choice = self.choose()
            if not isinstance(choice, str):
                self.branching = True
                return (f"back at trial {n}'s values, {choice[0]}", choice[1])
        return None

    def _search_afresh_from(self, values: dict[str, Any], m: Measurement) -> None:
        """Move the walk to `values` (measured as `m`) with nothing ranked, paired, measured
        about directions or rolled back there yet (what it visited, and the directions that
        lost badly, still count)."""
        self.values, self.current = dict(values), m
        self._open, self.paired, self.refit = None, None, None
        self.momentum, self.rejected = self.momentum.carried_over(), set()

    def _reopen(self) -> tuple[str, PlannedMove] | None:
        """Once per best values, when no kept values have a move left: the knob changes
        rolled back elsewhere, proposed again from the best values (where they lead to
        values not measured yet), with the walk moved there; None when none is open.
        A change that lost from the start may win once another knob has moved (a larger
        tile with the warps doubled); before this, the walk stopped with its budget unspent."""
        key = frozenset(self.best_values.items())
        if key in self._reopened:
            return None
        self._reopened.add(key)
        self._search_afresh_from(self.best_values, self.best_m)
        self.branching = False
        choice = self.choose()
        if isinstance(choice, str):
            return None
        return (f"rolled back before, tried again from the best values, {choice[0]}", choice[1])

    def _refit(self, label: str, planned: PlannedMove) -> None:
        """Queue `planned` (a grown tile that did not fit in shared memory) with one
        pipeline stage fewer, next in either walk: the limit is the hardware's."""
        refit = stages_alongside(
            planned,
            self.lab.spec.knobs_for(self.lab.version),
            self.values,
            self.metrics(),
            self.current.launched,
            self.rejected,
            self.visited,
        )
        if refit is not None:
            self.refit = (f"{label}, one stage fewer", refit)

    def _pair(self, label: str, planned: PlannedMove) -> None:
        """Queue `planned` (measured slower) with the warps scaled alike, when it resizes."""
        paired = untried_pair(
            planned,
            self.lab.spec.knobs_for(self.lab.version),
            self.values,
            self.metrics(),
            self.current.launched,
            self.rejected,
            self.visited,
        )
        if paired is not None:
            self.paired = (f"{label}, warps alongside", paired)


class CatalogWalk(_Walk):
    def __init__(self, *args: Any, store: Store, language: str | None, spec: KernelSpec):
        super().__init__("catalog", *args)
        self.store, self.language, self.spec = store, language, spec
        # The candidate behind each option's planned move: its entry and whether it is a
        # fired anti-pattern's, for the record's score (`place_pair`).
        self._candidates: dict[int, Any] = {}

    def _options_of(self, found: Sequence[Any]) -> list[tuple[str, PlannedMove]]:
        self._candidates.update({id(c.planned): c for c in found})
        return [(f"{c.label} {c.entry}", c.planned) for c in found]

    def place_pair(
        self, pair: tuple[str, PlannedMove], rest: list[tuple[str, PlannedMove]]
    ) -> list[tuple[str, PlannedMove]]:
        """Among the other moves by the pairing's measured record (`move_record.place_pair`)."""
        record = record_for(self.store.root)
        metrics = self.metrics()

        def score(option: tuple[str, PlannedMove]) -> float | None:
            c = self._candidates.get(id(option[1]))
            return None if c is None else candidate_score(c, record, metrics)

        return place_pair(pair, rest, record, score)

    def options(self) -> list[tuple[str, PlannedMove]] | str:
        profile = self.profile()
        # The whole ranking, then the entries it left out (the random arm's pool): the walk
        # stops only when no entry has a move left, and takes the ranked ones first.
        found = search_candidates(
            self.store,
            self.spec,
            self.lab.version,
            search_order(profile, self.store, self.language),
            self.metrics(profile),
            **self._search_state(),
        )
        if not found:
            return "no catalog entry has an applicable move left"
        return self._options_of(found)

    def _search_state(self) -> dict[str, Any]:
        return {
            "tried_values": self.visited,
            "rejected": self.rejected,
            "values": self.values,
            "launched": self.current.launched,
        }

    def relaxed_options(self) -> list[tuple[str, PlannedMove]]:
        profile = self.profile()
        found = candidates(
            self.store,
            self.spec,
            self.lab.version,
            search_order(profile, self.store, self.language),
            self.metrics(profile),
            relax=True,
            **self._search_state(),
        )
        return self._options_of(found)


class RandomWalk(_Walk):
    def __init__(self, *args: Any, pool: Sequence[tuple[str, Any]], spec: KernelSpec, seed: int):
        super().__init__("random", *args)
        self.pool, self.spec = list(pool), spec
        self.rng = random.Random(seed)

    def options(self) -> list[tuple[str, PlannedMove]] | str:
        for relax in (False, True):  # the catalog arm's two passes (search_candidates)
            options = self._open_moves(relax)
            if options:
                # A random order of the open moves, drawn once per state: the step takes
                # the first, and the ones after it are what `upcoming` can compile ahead.
                self.rng.shuffle(options)
                return options
        return "no entry's move applies to the current values any more"

    def relaxed_options(self) -> list[tuple[str, PlannedMove]]:
        options = self._open_moves(True)
        self.rng.shuffle(options)  # several moves may push the same way: a random one first
        return options

    def _open_moves(self, relax: bool) -> list[tuple[str, PlannedMove]]:
        metrics = self.metrics()
        knobs = self.spec.knobs_for(self.lab.version)
        options = []
        for name, move in self.pool:
            planned = plan_move(
                move, knobs, self.values, metrics, self.current.launched, relax=relax
            )
            if isinstance(planned, NotApplicable):
                continue
            if frozenset({**self.values, **planned.values}.items()) in self.visited:
                continue
            if planned.signature in self.rejected:
                continue
            options.append((name, planned))
        return options


def load_results(root: Path) -> list[dict[str, Any]]:
    """Every real ablation results file, oldest first."""
    folder = Path(root) / RESULTS_DIR
    docs = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and doc.get("kind") == "kbopt-ablation" and not doc.get("fake"):
            doc["_file"] = (RESULTS_DIR / path.name).as_posix()
            docs.append(doc)
    return docs


def condition_metrics(store: Store) -> frozenset[str]:
    """Every metric a catalog condition reads: the entries' triggers (with their room to
    act and defining conditions) and their moves' preconditions."""
    names: set[str] = set()
    for entry in store.entries():
        names.update(t.metric for t in entry.triggers)
        for move in entry.moves:
            names.update(t.metric for t in move.when)
    return frozenset(names)


def grid_space(knobs: Sequence[Knob]) -> list[tuple[str, tuple[Any, ...]]]:
    return [(k.name, tuple(k.values)) for k in knobs if k.values]


def grid_points(
    knobs: Sequence[Knob], count: int, rng: random.Random, skip: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """`count` points of the knob grid without replacement (all of it, shuffled, when it
    fits), never the starting point `skip`."""
    space = grid_space(knobs)
    sizes = [len(v) for _, v in space]
    total = 1
    for s in sizes:
        total *= s

    def point(index: int) -> dict[str, Any]:
        out = {}
        for (name, values), size in zip(space, sizes, strict=True):
            index, r = divmod(index, size)
            out[name] = values[r]
        return out

    start = frozenset(skip.items())
    order = rng.sample(range(total), min(total, count + 1))
    points = [p for p in map(point, order) if frozenset({**skip, **p}.items()) != start]
    return points[:count]


def expected_grid_trials(trials: Sequence[TrialRow], overall_us: float | None) -> float | None:
    """How many trials a random grid sample needs, on average, to come within 5% of
    `overall_us`, from the share of this sample's points that did (None when none did).

    One sample's count is one draw: a lucky second point says little.  Points drawn
    without replacement from a space in which k of n are good put the first good one, on
    average, at (n + 1) / (k + 1); the sample's own share estimates k / n, and the starting
    trial comes first."""
    if overall_us is None or not trials:
        return None
    good = overall_us * (1 + WITHIN_PCT / 100)

    def hit(t: TrialRow) -> bool:
        return t.status == "ok" and t.duration_us is not None and t.duration_us <= good

    if hit(trials[0]):
        return 1.0
    sampled = trials[1:]
    k = sum(hit(t) for t in sampled)
    if k == 0:
        return None
    return round(1 + (len(sampled) + 1) / (k + 1), 1)


def pool_of_moves(store: Store, language: str | None) -> list[tuple[str, Any]]:
    """Every move of every entry in scope (shared + the family's language): the
    optimizations' moves and the anti-patterns' ways out, as the catalog arm can use."""
    return [(e.name, m) for e in in_scope_with_moves(store, language) for m in e.moves]


def default_start(spec: KernelSpec) -> str:
    """The first version (ladder order) that sets at least one of its family's knobs."""
    for name in spec.version_files():
        if spec.knobs_for(name) and spec.knob_values(name):
            return name
    raise KbError(f"{spec.name}: no version sets any knob its spec declares; name one with --from")


def start_profile_for(
    profile: Profile, spec: KernelSpec, start: str, config: TrialConfig
) -> Profile:
    """`profile` checked against the run (the same kernel, version and dims: a profile of
    other values would rank moves for a kernel that is not being measured), with the
    metrics the spec derives from the dims as the spec gives them now (a profile recorded
    before a spec's `row_len` was corrected keeps its counters, not its old row length)."""
    dims = config.dims_dict
    wanted = {k: float(v) for k, v in dims.items()}
    where = f"the start profile ({profile.kernel} {profile.version})"
    if profile.kernel != spec.name:
        raise KbError(f"{where} is of kernel {profile.kernel}, not {spec.name}")
    if profile.version and profile.version != start:
        raise KbError(f"{where} is of version {profile.version}; the ablation starts from {start}")
    got = {k: float(v) for k, v in profile.config.items() if k in wanted}
    if got != wanted:
        shown = ", ".join(f"{k}={v:g}" for k, v in profile.config.items())
        raise KbError(f"{where} was measured at {shown}; the ablation measures at {config.shape}")
    measured = {**profile.measured, **spec.dim_metrics(dims)}
    return profile.model_copy(update={"measured": measured})


def run_ablation(
    *,
    spec: KernelSpec,
    backend: MeasurementBackend,
    store: Store,
    start: str,
    config: TrialConfig,
    arms: Sequence[str],
    trials: int,
    seed: int = 0,
    budget_s: float | None = None,
    progress: Callable[[str, TrialRow], None] = lambda arm, row: None,
    warmer: Warmer | None = None,
    start_profile: Profile | None = None,
    start_profile_source: str = "",
) -> dict[str, Any]:
    """Run the arms (interleaved, one trial each in turn) and return the results document.

    With a `start_profile` (`kbopt profile` of the starting version at this configuration,
    with counters), both walks read it at the starting values instead of the timing-only
    profile, its dims' metrics taken from the spec as it is now (`start_profile_for`).

    With a `warmer` (`kbopt.bench.warm_compile.CompileWarmer`), each round first compiles,
    in parallel, what the arms are about to measure (`next_to_compile`)."""
    unknown = [a for a in arms if a not in ARMS]
    if unknown or not arms:
        raise KbError(
            f"--arms: unknown arm(s) {', '.join(unknown) or '(none)'}; use {', '.join(ARMS)}"
        )
    twice = [a for a in arms if list(arms).count(a) > 1]
    if twice:  # a second run of the same arm would spend its budget to say the same
        raise KbError(f"--arms: {twice[0]} is given twice")
    if trials < 2:
        raise KbError(f"--trials must be at least 2 (the start and one more); got {trials}")
    knobs = spec.knobs_for(start)
    if not knobs:
        raise KbError(f"{start} has no knobs in {spec.name}'s spec: nothing to search")
    file_values = spec.knob_values(start)
    family = spec.version_family(start)
    language = family_language(family)
    lab = Lab(backend, spec, start, config, file_values)
    lab.recorded = condition_metrics(store)
    began = time.monotonic()
    m0, err0 = lab.measure(file_values)
    if m0 is None or not m0.correct:
        raise KbError(f"the starting point {start} fails at {config.shape}: {err0}")
    start_row = _row(1, file_values, m0, "")
    start_row.kept = True
    if start_profile is not None:
        lab.start_profile = start_profile_for(start_profile, spec, start, config)
        lab.start_measurement = m0
    results: dict[str, Any] = {}
    walkers: dict[str, Any] = {}
    grid: list[dict[str, Any]] = []
    for arm in arms:
        if arm == "catalog":
            walkers[arm] = CatalogWalk(
                lab, _copy(start_row), m0, store=store, language=language, spec=spec
            )
        elif arm == "random":
            walkers[arm] = RandomWalk(
                lab, _copy(start_row), m0, pool=pool_of_moves(store, language), spec=spec, seed=seed
            )
        else:
            results[arm] = ArmResult(arm, [_copy(start_row)])
            grid = grid_points(knobs, trials - 1, random.Random(seed), file_values)
    for arm in arms:
        progress(arm, start_row)
    timed_out = False
    deadline = None if budget_s is None else began + budget_s
    for n in range(2, trials + 1):
        if warmer is not None and warmer.stats.workers > 0:
            width = warmer.stats.workers
            queues = [
                walkers[arm].upcoming(width)
                if arm in walkers
                else [{**file_values, **g} for g in grid[n - 2 : n - 2 + width]]
                for arm in arms
            ]
            known = set(lab.cache) | warmer.done
            ahead, sure = next_to_compile(queues, known, width)
            warmer.warm(ahead, deadline, sure)
        for arm in arms:
            if budget_s is not None and time.monotonic() - began > budget_s:
                timed_out = True
                break
            if arm in walkers:
                w = walkers[arm]
                if w.result.stopped:
                    continue
                if w.step(n):
                    progress(arm, w.result.trials[-1])
            else:
                res = results[arm]
                if n - 2 >= len(grid):
                    res.stopped = res.stopped or "the whole grid was measured"
                    continue
                values = {**file_values, **grid[n - 2]}
                m, err = lab.measure(values)
                row = _row(n, values, m, err)
                res.trials.append(row)
                progress(arm, row)
        if timed_out:
            break
        if all((walkers[a].result if a in walkers else results[a]).stopped for a in arms):
            break  # nothing left to measure: a --trials far above the grid ends here
    for arm, w in walkers.items():
        results[arm] = w.result
    # The starting values once more, uncached: how far one launch's time moves between two
    # measurements in this run, which the verdict needs to tell a real margin from noise.
    repeat, _ = lab.measure(file_values, again=True)
    lab.start_repeat_us = repeat.duration_us if repeat is not None and repeat.correct else None
    if timed_out:
        for res in results.values():
            if len(res.trials) < trials and not res.stopped:
                res.stopped = f"wall-time budget ({budget_s:g} s) reached"
    doc = _document(spec, start, config, arms, trials, seed, budget_s, lab, results, backend, store)
    if start_profile is not None:
        # Which profile the walks ranked from at the start: measured before the run (its
        # ncu passes are not trials), named so the run can be repeated.
        doc["start_profile"] = {
            "source": start_profile_source,
            "bottleneck": start_profile.bottleneck.value if start_profile.bottleneck else None,
        }
    # How many configurations were compiled ahead, in how many parallel batches and how
    # much wall time: what the budget paid for besides the measurements.
    doc["compiled_ahead"] = warmer.stats.as_dict() if warmer is not None else None
    # How often the measuring process was replaced (`kbopt.bench.isolated`: a faulting
    # launch, a hang, a crash); absent where measurements ran in this process.
    if hasattr(backend, "restarts"):
        doc["measuring_restarts"] = backend.restarts
    return doc


class Warmer(Protocol):
    """Compiles knob configurations ahead of their measurement (see run_ablation)."""

    stats: WarmStats
    done: set[frozenset]  # configurations compiled (or tried) already

    def warm(
        self,
        configs: Sequence[Mapping[str, Any]],
        deadline: float | None = None,
        sure: Sequence[bool] | None = None,
    ) -> int: ...


def next_to_compile(
    queues: Sequence[Sequence[Mapping[str, Any]]], known: Collection[frozenset], limit: int
) -> tuple[list[dict[str, Any]], list[bool]]:
    """At most `limit` configurations, taken from the arms' queues in turn (each arm's next
    measurement first, then what would follow it), none `known` (measured or compiled
    already), none twice; and which are an arm's next measurement, the only ones a round
    waits for.  The grid's later points will be measured too if the budget lasts, but a
    round that waited for all of them would spend the budget on points one slow compile
    may never let the grid reach (on the H200, 114 s of a 140 s run went to one such round)."""
    out: list[dict[str, Any]] = []
    sure: list[bool] = []
    seen = set(known)
    for depth in range(max((len(q) for q in queues), default=0)):
        for queue in queues:
            if depth < len(queue) and len(out) < limit:
                key = frozenset(queue[depth].items())
                if key not in seen:
                    seen.add(key)
                    out.append(dict(queue[depth]))
                    sure.append(depth == 0)
    return out, sure


def _copy(row: TrialRow) -> TrialRow:
    return TrialRow(**asdict(row))


def _document(
    spec: KernelSpec,
    start: str,
    config: TrialConfig,
    arms: Sequence[str],
    trials: int,
    seed: int,
    budget_s: float | None,
    lab: Lab,
    results: Mapping[str, ArmResult],
    backend: MeasurementBackend,
    store: Store,
) -> dict[str, Any]:
    bests = [r.best() for r in results.values()]
    overall = min((b.duration_us for b in bests if b and b.duration_us), default=None)
    first = lab.first
    device = first.device if first else ""
    first_us = first.duration_us if first else None
    rows = []
    for arm in arms:
        res = results[arm]
        best_so_far: float | None = None
        reached: int | None = None
        for t in res.trials:
            if t.status == "ok" and t.duration_us is not None:
                best_so_far = min(best_so_far or t.duration_us, t.duration_us)
            t.best_us = best_so_far
            if (
                reached is None
                and best_so_far is not None
                and overall is not None
                and best_so_far <= overall * (1 + WITHIN_PCT / 100)
            ):
                reached = t.n
        best = res.best()
        rows.append(
            {
                "kernel": spec.name,
                "arm": arm,
                "trials": len(res.trials),
                "best_pct_of_floor": best.pct_of_floor if best else None,
                "best_us": best.duration_us if best else None,
                "best_values": best.values if best else None,
                "trials_to_within_5pct": reached,
                **(
                    {"expected_trials_to_within_5pct": expected_grid_trials(res.trials, overall)}
                    if arm == "grid"
                    else {}
                ),
                "failed_trials": sum(t.status != "ok" for t in res.trials),
                "stopped": res.stopped,
                "device": device,
                "fake": backend.name == "fake",
                "trajectory": [asdict(t) for t in res.trials],
            }
        )
    return {
        "kind": "kbopt-ablation",
        "kernel": spec.name,
        "spec": spec.locator if ":" in spec.locator else spec.source or spec.name,
        "start_version": start,
        "config": config.as_dict(),
        "backend": backend.name,
        "fake": backend.name == "fake",
        "device": device,
        "versions": dict(first.versions) if first else {},
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "trials_budget": trials,
        "budget_s": budget_s,
        "seed": seed,
        "arms": list(arms),
        "best_us_any_arm": overall,
        # The starting values measured twice (first and last): their spread is this run's
        # noise for one measurement; a margin smaller than it is not a result.
        "start_us": first_us,
        "start_repeat_us": lab.start_repeat_us,
        "noise_pct": noise_pct(first_us, lab.start_repeat_us),
        # Inputs the starting version writes into (positions): every trial of such a kernel
        # is timed on restored copies of them, not on what the previous call left.
        "start_inputs_written": list(first.inputs_written) if first else [],
        # Which catalog chose: a digest of every entry file the store served (the same
        # bytes give the same digest on any machine), and the commit when the caller knows it.
        "catalog_digest": catalog_digest(store),
        "catalog_commit": os.environ.get("KBOPT_COMMIT", ""),
        # the measured record that ordered the catalog arm's moves (runs, moves, trials)
        "move_record": record_for(store.root).summary(),
        "knobs": {k.name: list(k.values) for k in spec.knobs_for(start)},
        "rows": rows,
    }


def noise_pct(a: float | None, b: float | None) -> float | None:
    """How far apart two measurements of one launch are, in % of the faster."""
    if not a or not b:
        return None
    return round(abs(a - b) / min(a, b) * 100, 2)


def catalog_digest(store: Store) -> str:
    """sha256 over the entry files the store serves (names and bytes, in name order)."""
    h = hashlib.sha256()
    for path in sorted(store.entry_files(), key=lambda p: p.name):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def results_path(root: Path, doc: Mapping[str, Any]) -> Path:
    stamp = str(doc["date"]).replace("-", "").replace(":", "")
    device = re.sub(r"[^A-Za-z0-9]+", "-", str(doc["device"]) or "unknown").strip("-")
    return root / RESULTS_DIR / f"{stamp}-{doc['kernel']}-{device}.json"


def write_results(path: Path, doc: Mapping[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")
    return path


def grid_size(knobs: Sequence[Knob]) -> int:
    return math.prod(len(v) for _, v in grid_space(knobs))
