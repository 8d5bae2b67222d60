"""The catalog designer: DESIGN by applying a ranked entry's move to the kernel's knobs.

`kbopt cycle KERNEL --designer catalog` runs with no person and no LLM.  At each DESIGN:

1. the strategy's ranking of the current profile is read in order (STRATEGIZE's plan,
   continued past its first ten entries);
2. for each ranked optimization, each of its `moves` (front matter, `kbopt.moves`) is
   planned against the current version's knob values (`KernelSpec.knob_values`) and the
   profile's metrics; the moves of fired anti-patterns come first, then the others in the
   order of what each move found in the project's measured ablations
   (`kbopt.workflow.move_record`; the ranking's order where that record says nothing);
   the first move that applies, and was not tried from the same parent
   version (the same entry's move, or the same resulting knob values), is chosen -- a
   knob change rolled back earlier in the run, or by an earlier run of the same kernel on
   the same backend from exactly the current knob values (`runs/*/catalog-moves.json`),
   is not proposed again; once no ranked entry has a move left, the catalog's other
   entries with moves follow (`with_unranked`: bottleneck class, then expected gain);
   what the run has measured reorders them as `kbopt ablate`'s walks do
   (`kbopt.workflow.search_momentum`): a clear win is pushed once more, a move undoing
   one waits, a direction kept without a gain goes last, the other way goes first after
   a clear loss; a move that only resized a tile
   and was rolled back as slower is designed once more with the warps scaled alike
   (`kbopt.workflow.search_pairing`);
3. the new version is a copy of the current version file with the changed knob values
   (`kbopt.workflow.knob_source`), written after the cycle backed up the kernel folder, so
   VERIFY's rollback deletes it byte for byte; the designer checks it against the
   reference at the first configuration before handing it back.

When no entry in scope has an applicable move the designer raises `DesignerUnavailable`
with `NO_MOVE`, or, where the moves left act on knobs the version leaves to the kernel
(None) and no launch recorded what the kernel chose for them (the fake backend learns
them by compiling a Triton version's launch, and cannot for one that chooses on the GPU),
with `UNPLANNED` naming those knobs.  If the run kept a faster version than the current
one, the cycle goes on from that one (`Cycle._go_on_from_the_fastest`); it does so sooner
after a version kept more than `PLATEAU_PCT` slower than the fastest, whenever a move is
open from the fastest (`Cycle._propose_from_the_fastest`); and from the fastest with no
move left it goes back to the latest other version it kept that has one
(`Cycle._propose_from_an_earlier_version`).  Otherwise it
stops (LEARN still records what the run did), the record says why, and `kbopt cycle`
exits non-zero.  That is the point where a person or the LLM designer must write code.

What was chosen is kept in `runs/<id>/catalog-moves.json` (by attempt), so a resumed run
designs the same change, and LEARN's evidence names the exact knob change; each attempt
also keeps the search rule that placed its move (`momentum`, "" for none), which the
proposal's rationale states in words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kbopt.bench.backend import measure_with_backoff
from kbopt.contracts.new_version import NewVersion, TrialCheck
from kbopt.contracts.task import OptimizationTask
from kbopt.errors import KbError, VersionFailed
from kbopt.kernel import VERSION_RE, KernelSpec
from kbopt.moves import (
    LEFT_TO_THE_KERNEL,
    NotApplicable,
    PlannedMove,
    change_signature,
    launch_equivalents,
    plan_move,
    values_key,
)
from kbopt.store import Store, atomic_write
from kbopt.vocab import VERSION_FAMILY_LANGUAGE
from kbopt.workflow.designers import DesignContext, DesignerUnavailable, Proposal
from kbopt.workflow.move_record import (
    candidate_key,
    candidate_score,
    order_by_record,
    place_pair,
    record_for,
)
from kbopt.workflow.record import AttemptStatus, RunRecord
from kbopt.workflow.search_momentum import RULE_WHY, Momentum, directions
from kbopt.workflow.search_pairing import NOTE as PAIRING_NOTE
from kbopt.workflow.search_pairing import STAGES_NOTE as REFIT_NOTE
from kbopt.workflow.search_pairing import out_of_shared_memory, stages_alongside, untried_pair

NAME = "catalog"
STATE_FILE = "catalog-moves.json"
RANK_DEPTH = 100  # more than the catalog's optimizations in any one language's scope
MOVE_KINDS = ("optimization", "anti-pattern")


def ranked_moves_order(strategy: Any) -> list[dict[str, Any]]:
    """A `Strategy`'s warnings and opportunities as one list: the order in which the
    catalog search tries their moves.  Every fired anti-pattern comes first, the highest
    score first: its way out answers a symptom this profile measured, and in the committed
    H200 ablations such moves beat the search's best so far about twice as often as the
    moves of ranked opportunities (`scripts/move_outcomes.py`).  The opportunities follow
    in the order the ranking shows (near-ties broken by risk and `requires` links, not by
    raw score)."""
    opps = [{**o.to_dict(), "rank": i} for i, o in enumerate(strategy.opportunities, 1)]
    warns = [{**w.to_dict(), "warning": i} for i, w in enumerate(strategy.warnings, 1)]
    warns.sort(key=lambda r: -float(r.get("score") or 0.0))
    return warns + opps


NO_MOVE = (
    "no catalog entry has a move left for this kernel's knobs: "
    "a person or the LLM designer must write code next"
)


# Why a move could not be planned although its entry applies: the version leaves the knob
# to the kernel (None) and no launch said what the kernel chose (`kbopt.moves.plan_move`).
UNPLANNED = "no catalog move can be planned for this kernel's knobs"
_LEFT_TO_THE_KERNEL = re.compile(rf"(\w+): {re.escape(LEFT_TO_THE_KERNEL)}$")


def left_to_the_kernel(why_not: Sequence[str]) -> list[str]:
    """The knobs whose moves were not planned because the version leaves them at None and
    nothing recorded the value the kernel launched with (from `candidates`' why_not)."""
    return sorted({m.group(1) for w in why_not if (m := _LEFT_TO_THE_KERNEL.search(w))})


def unplanned(version: str, knobs: Sequence[str], backend: str) -> str:
    """The stop line when the only moves left act on knobs left to the kernel."""
    how = (
        "the fake backend, which compiles a Triton version's launch without running it to "
        "learn those values, learnt none for them (the run record's measurement note says "
        "why)"
        if backend == "fake"
        else "its launch did not record what the kernel chose for them"
    )
    return (
        f"{UNPLANNED}: {version} leaves {', '.join(knobs)} to the kernel and {how}; measure "
        f"on a GPU (--backend real), whose launch records those values, or set them in "
        f"{version}"
    )


def family_language(family: str | None) -> str | None:
    """The catalog language of a version family (`triton`, `cute` -> cute-dsl...), if any."""
    lang = VERSION_FAMILY_LANGUAGE.get(family or "")
    return None if lang is None else lang.value


def next_version(spec: KernelSpec, family: str) -> str:
    """`<family>_v<N+1>` after the highest version number of the family in the folder."""
    numbers = [
        int(m["number"])
        for name in spec.version_files()
        if (m := VERSION_RE.match(name)) is not None and m["family"] == family
    ]
    return f"{family}_v{max(numbers, default=0) + 1}"


def profile_metrics(record: RunRecord) -> dict[str, float]:
    from kbopt.contracts.profile import Profile
    from kbopt.strategy import trigger_metrics

    if not record.profile:
        return {}
    return trigger_metrics(Profile.parse(record.profile))


def current_launch(record: RunRecord) -> dict[str, Any]:
    """What the current version's launch recorded, from its latest measurement in the run."""
    measured: Mapping[str, Any] | None = None
    if record.current_version == record.start_version:
        measured = next(iter(record.baseline.values()), None)
    for attempt in reversed(record.attempts):
        if (
            attempt.status is AttemptStatus.APPLIED
            and attempt.new_version == record.current_version
            and attempt.measurements
        ):
            measured = next(iter(attempt.measurements.values()))
            break
    return dict((measured or {}).get("launched") or {})


class Candidate:
    """One ranked entry's applicable move."""

    def __init__(
        self,
        entry: str,
        index: int,
        rank: int | None,
        planned: PlannedMove,
        opp: Mapping,
        paired: bool = False,
        refit: bool = False,
    ):
        self.entry = entry
        self.index = index
        self.rank = rank  # the strategy's rank among opportunities; None for a warning
        self.planned = planned
        self.opp = opp
        self.paired = paired  # the entry's move with the warps scaled alike (search_pairing)
        # the entry's grown tile, out of shared memory, with one pipeline stage fewer
        self.refit = refit

    @property
    def label(self) -> str:
        """`#3` for the third-ranked opportunity, `warning 1` for a fired anti-pattern."""
        return _label(self.opp, self.rank)


def _label(opp: Mapping[str, Any], rank: int | None) -> str:
    if opp.get("unranked"):
        return "unranked"
    return f"warning {opp['warning']}" if opp.get("warning") else f"#{rank}"


def candidates(
    store: Store,
    spec: KernelSpec,
    version: str,
    ranked: Sequence[Mapping[str, Any]],
    metrics: Mapping[str, float],
    *,
    tried: set[tuple[str, int]] = frozenset(),  # type: ignore[assignment]
    tried_values: set[frozenset] = frozenset(),  # type: ignore[assignment]
    rejected: set[frozenset] = frozenset(),  # type: ignore[assignment]
    why_not: list[str] | None = None,
    values: Mapping[str, Any] | None = None,
    launched: Mapping[str, Any] | None = None,
    relax: bool = False,
) -> list[Candidate]:
    """Every applicable move of the ranked entries, in ranking order then move order.

    Optimizations propose their moves; a fired anti-pattern (a warning) proposes the moves
    that take the kernel out of it.  `rejected`: knob changes (`PlannedMove.signature`)
    already measured and rolled back in this search; they are not proposed again from
    elsewhere.  `values`: the knob values to move from (default: what the version file
    sets; the ablation passes the values it is exploring without writing files).
    `launched`: what the current version's launch recorded (`Measurement.launched`), so a
    knob left at None is scaled from the value it ran with.  `relax`: also moves whose
    measured preconditions fail (`plan_move`'s relax; `search_candidates` asks for them
    only when no move with holding preconditions is left)."""
    from kbopt.workflow.knob_source import settable_knobs

    knobs = spec.knobs_for(version)
    settable = settable_knobs(spec.version_path(version), [k.name for k in knobs])
    if values is None:
        values = spec.knob_values(version)
    out: list[Candidate] = []
    for position, opp in enumerate(ranked, 1):
        rank: int | None = (
            None if opp.get("warning") or opp.get("unranked") else int(opp.get("rank", position))
        )
        shown = _label(opp, rank)
        if opp.get("kind", "optimization") not in MOVE_KINDS:
            continue
        name = str(opp["id"])
        try:
            entry = store.get(name)
        except KbError:
            continue
        for i, move in enumerate(entry.moves):
            planned = plan_move(move, knobs, values, metrics, launched, relax=relax)
            if isinstance(planned, NotApplicable):
                if why_not is not None:
                    why_not.append(f"{shown} {name} ({move.describe()}): {planned.reason}")
                continue
            fixed = sorted(c.knob for c in planned.changes if c.knob not in settable)
            if fixed:
                if why_not is not None:
                    why_not.append(
                        f"{shown} {name}: {version} sets {', '.join(fixed)} neither in "
                        "CONFIG = ...(...) nor as a constant"
                    )
                continue
            key = frozenset({**values, **planned.values}.items())
            if planned.signature in rejected:
                if why_not is not None:
                    why_not.append(f"{shown} {name}: {planned.text()} was measured and rolled back")
                continue
            if (name, i) in tried or key in tried_values:
                if why_not is not None:
                    why_not.append(f"{shown} {name}: {planned.text()} already measured")
                continue
            out.append(Candidate(name, i, rank, planned, opp))
    return out


def search_candidates(
    store: Store,
    spec: KernelSpec,
    version: str,
    ranked: Sequence[Mapping[str, Any]],
    metrics: Mapping[str, float],
    **kwargs: Any,
) -> list[Candidate]:
    """`candidates` in two passes: the moves whose preconditions hold (or were not
    measured); only when none is left, the same ranking's moves whose measured
    preconditions fail.  In each pass the fired anti-patterns' moves come first, then the
    rest by their record (`move_record.order_by_record`), the ranking's order breaking ties.  A precondition is a threshold written from sources,
    not from this kernel: once every move it allows has been measured, the ranking still
    says which direction is most promising, and a measured trial settles it (the move
    says which preconditions it passed over).  Rows marked `unranked` (`with_unranked`)
    come after all of that: the same two passes over them, once no ranked entry's move is
    left."""
    head = [r for r in ranked if not r.get("unranked")]
    tail = [r for r in ranked if r.get("unranked")]
    for rows in (head, tail):
        found = _two_passes(store, spec, version, rows, metrics, **kwargs)
        if found:
            return found
    return []


def _two_passes(
    store: Store,
    spec: KernelSpec,
    version: str,
    ranked: Sequence[Mapping[str, Any]],
    metrics: Mapping[str, float],
    **kwargs: Any,
) -> list[Candidate]:
    # Within each pass, the record of what each move found in the project's measured
    # ablations, within the band of the current values (`record_band`), orders the moves after the
    # fired anti-patterns' (`move_record`).
    record = record_for(store.root)
    args = (spec, version, ranked, metrics)
    found = candidates(store, *args, **kwargs)
    if found:
        return order_by_record(found, record, metrics)
    kwargs = {**kwargs, "why_not": None, "relax": True}
    # Among one entry's moves, the one whose preconditions miss least comes first (halving
    # the warps when the row is far longer than its precondition allows is the worse bet
    # than doubling them when it is just short of it); the entries keep the ranking's order.
    relaxed = candidates(store, *args, **kwargs)
    first: dict[str, int] = {}
    for c in relaxed:
        first.setdefault(c.entry, len(first))
    return order_by_record(
        sorted(relaxed, key=lambda c: (first[c.entry], c.planned.miss)), record, metrics
    )


def in_scope_with_moves(store: Store, language: str | None) -> list[Any]:
    """Every entry a search may apply: optimizations and anti-patterns (their ways out)
    that declare moves, not refuted, shared or of the kernel family's language."""
    out = []
    for e in sorted(store.entries(), key=lambda e: e.name):
        if e.kind.value not in MOVE_KINDS or e.status.value == "refuted" or not e.moves:
            continue
        if e.language is not None and e.language.value != language:
            continue
        out.append(e)
    return out


def with_unranked(
    ranked: Sequence[Mapping[str, Any]],
    store: Store,
    language: str | None,
    bottleneck: str | None,
) -> list[dict[str, Any]]:
    """The ranking's rows, then a row for every other entry in scope that declares moves
    (`unranked`), so a search does not stop while the catalog still has a move to try.
    The ranking leaves an entry out when its measured conditions contradict it; with no
    symptom to go on, the catalog's prior orders the rest: entries written for the
    profile's bottleneck class first, then by expected gain (the ranking's class and gain
    terms), then by name."""
    from kbopt.ranking import W_CLASS, W_GAIN

    shown = {str(r.get("id")) for r in ranked}
    rest = []
    for e in in_scope_with_moves(store, language):
        if e.name in shown:
            continue
        cls = 1.0 if bottleneck and bottleneck in {b.value for b in e.bottlenecks} else 0.0
        prior = W_CLASS * cls + W_GAIN * min(float(e.expected_gain_pct), 100.0) / 100.0
        rest.append(
            {
                "id": e.name,
                "kind": e.kind.value,
                "title": e.title,
                "unranked": True,
                "score": round(prior, 4),
            }
        )
    rest.sort(key=lambda r: (-float(r["score"]), str(r["id"])))
    return [dict(r) for r in ranked] + rest


def search_order(profile: Any, store: Store, language: str | None) -> list[dict[str, Any]]:
    """What a catalog search tries for `profile`, in order: the strategy's whole ranking
    (`ranked_moves_order`, past its first ten), then the entries it left out
    (`with_unranked`).  The catalog designer and the ablation's catalog arm both search it."""
    from kbopt.strategy import recommend

    deep = recommend(profile, language=language, store=store, limit=RANK_DEPTH)
    bottleneck = profile.bottleneck.value if profile.bottleneck else None
    return with_unranked(ranked_moves_order(deep), store, language, bottleneck)


def _launched(measurements: Mapping[str, Any]) -> dict[str, Any]:
    """What a version's launches recorded for its knobs at every configuration of a run
    record's measurements, where they agree: a knob left at None that the kernel resolves
    by shape (warps from the row width) is the same version as an explicit value only if
    it launched with that value at every configuration."""
    seen = [dict((m or {}).get("launched") or {}) for m in measurements.values()]
    if not seen:
        return {}
    return {k: v for k, v in seen[0].items() if all(s.get(k) == v for s in seen[1:])}


def _at_the_fastest(record: RunRecord) -> bool:
    """Whether the current version is the fastest this run kept at its primary
    configuration (the first measured): where the cycle goes on from once no move is left
    from a slower kept version, and so where rolled-back changes are opened again."""
    primary = next(iter(record.baseline), None)
    if primary is None or "duration_us" not in record.baseline[primary]:
        return False
    timed = [(float(record.baseline[primary]["duration_us"]), record.start_version)]
    timed += [
        (float(a.measurements[primary]["duration_us"]), a.new_version)
        for a in record.attempts
        if a.status is AttemptStatus.APPLIED and "duration_us" in a.measurements.get(primary, {})
    ]
    return min(timed, key=lambda t: t[0])[1] == record.current_version


class CatalogDesigner:
    """Applies the top-ranked applicable catalog move (see the module docstring)."""

    name = NAME

    def __init__(self, root: Path):
        self.root = Path(root)
        self.store: Store | None = None
        self.spec: KernelSpec | None = None
        self.run_dir: Path | None = None
        self.language: str | None = None

    def bind(self, *, store: Store, spec: KernelSpec, run_dir: Path, record: RunRecord) -> None:
        """What the cycle knows that the designer needs (called before the run starts)."""
        self.store, self.spec, self.run_dir = store, spec, run_dir
        # The moves edit the current version's knobs: rank that family's language.
        self.language = family_language(spec.version_family(record.current_version))

    # ------------------------------------------------------------------ state

    def _state(self) -> dict[str, Any]:
        assert self.run_dir is not None
        path = self.run_dir / STATE_FILE
        if not path.is_file():
            return {}
        return dict(json.loads(path.read_text(encoding="utf-8")))

    def _save(self, state: Mapping[str, Any]) -> None:
        assert self.run_dir is not None
        atomic_write(self.run_dir / STATE_FILE, json.dumps(state, indent=1, default=str) + "\n")

    def _tried(self, record: RunRecord) -> tuple[set[tuple[str, int]], set[frozenset]]:
        """Moves already tried from the current version (its children), and every set of
        knob values this run has measured, from any version: a move that leads back to
        one of them (one entry undoing another's change) would pay a trial to learn
        nothing."""
        assert self.spec is not None
        state = self._state()
        parent = record.current_version
        moves: set[tuple[str, int]] = set()
        # with the forms that launch the same (a knob left at None written as the value it
        # ran with: `launch_equivalents`)
        values = launch_equivalents(
            self.spec.knob_values(record.start_version), _launched(record.baseline)
        )
        for attempt in record.attempts:
            chosen = state.get(str(attempt.iteration))
            if chosen is None:
                continue
            values |= launch_equivalents(
                dict(chosen["all_values"]), _launched(attempt.measurements)
            )
            if chosen["from_version"] == parent:
                moves.add((chosen["entry"], int(chosen["move"])))
        return moves, values

    def _rejected(self, record: RunRecord, here_only: bool = False) -> set[frozenset]:
        """Knob changes measured and rolled back: by this run (from any version), and by
        earlier runs of the same kernel on the same backend from exactly the current knob
        values (what did not work is not paid for again).  `here_only`: this run's only
        where they were measured from exactly the current values too (once no other move
        is open, a change that lost elsewhere is tried again from here)."""
        state = self._state()
        out: set[frozenset] = set()
        assert self.spec is not None
        here = values_key(self.spec.knob_values(record.current_version))
        for attempt in record.attempts:
            chosen = state.get(str(attempt.iteration))
            if chosen is None or "before" not in chosen:
                continue
            if attempt.status is not AttemptStatus.ROLLED_BACK:
                continue
            moved_from = {**chosen.get("all_values", {}), **chosen["before"]}
            if not here_only or values_key(moved_from) == here:
                out.add(change_signature(chosen["before"], chosen["values"]))
        for start, signature in self._earlier_losses(record):
            if start == here:
                out.add(signature)
        return out

    def _momentum(self, record: RunRecord) -> Momentum:
        """What this run's measured moves say about directions (`kbopt.workflow.
        search_momentum`), replayed from its attempts at the primary configuration (the
        first one measured): a clear win is pushed once more from the version it made, its
        undoing waits, a direction kept without being faster goes last, and after a clear
        loss the other way goes first."""
        state = self._state()
        momentum = Momentum()
        primary = next(iter(record.baseline), None)
        if primary is None or "duration_us" not in record.baseline[primary]:
            return momentum
        best = float(record.baseline[primary]["duration_us"])
        for attempt in record.attempts:
            chosen = state.get(str(attempt.iteration)) or {}
            moved = {(str(k), int(d)) for k, d in chosen.get("directions", [])}
            if attempt.status is AttemptStatus.APPLIED and primary in attempt.measurements:
                took = float(attempt.measurements[primary]["duration_us"])
                momentum.measured(moved, True, (best - took) / best * 100)
                best = min(best, took)
            elif attempt.status is AttemptStatus.ROLLED_BACK:
                # How much slower it ran (a clear loss points the other way); none when it
                # was rolled back before a time (a wrong result, a failed build).
                slower = attempt.measurements.get(primary, {}).get("duration_us")
                loss = (best - float(slower)) / best * 100 if slower is not None else 0.0
                momentum.measured(moved, False, loss)
        if record.attempts and record.attempts[-1].new_version != record.current_version:
            momentum.push = set()  # the run went on from another version: nothing to push
        return momentum

    def _last_move(
        self, record: RunRecord, metrics: Mapping[str, float], searched: Mapping[str, Any]
    ) -> tuple[dict[str, Any], PlannedMove] | None:
        """The last attempt's chosen state and its move planned again from the current
        version, when that attempt was rolled back from the current version and its entry's
        move still plans to the same values; else None."""
        assert self.store is not None and self.spec is not None
        if not record.attempts or record.attempts[-1].status is not AttemptStatus.ROLLED_BACK:
            return None
        chosen = self._state().get(str(record.attempts[-1].iteration)) or {}
        if chosen.get("from_version") != record.current_version:
            return None
        version = record.current_version
        try:
            move = self.store.get(str(chosen["entry"])).moves[int(chosen["move"])]
        except (KbError, IndexError, KeyError, ValueError):
            return None  # the entry changed since: nothing to pair
        knobs, values = self.spec.knobs_for(version), self.spec.knob_values(version)
        planned = plan_move(move, knobs, values, metrics, searched.get("launched"), relax=True)
        if isinstance(planned, NotApplicable) or planned.values != chosen.get("values"):
            return None
        return chosen, planned

    def _retry_candidate(
        self,
        record: RunRecord,
        ranked: Sequence[Mapping[str, Any]],
        chosen: Mapping[str, Any],
        planned: PlannedMove | None,
        **flags: bool,
    ) -> Candidate | None:
        """`planned` (the last move, changed again) as a candidate of the last move's
        entry, when every knob it sets is settable in the current version's source."""
        assert self.spec is not None
        if planned is None:
            return None
        from kbopt.workflow.knob_source import settable_knobs

        names = [c.knob for c in planned.changes]
        path = self.spec.version_path(record.current_version)
        if len(settable_knobs(path, names)) < len(names):
            return None
        opp = next(
            (r for r in ranked if r.get("id") == chosen["entry"]),
            {"id": chosen["entry"], "unranked": True},
        )
        rank = chosen.get("rank")
        return Candidate(str(chosen["entry"]), int(chosen["move"]), rank, planned, opp, **flags)

    def _paired_retry(
        self,
        record: RunRecord,
        ranked: Sequence[Mapping[str, Any]],
        metrics: Mapping[str, float],
        searched: Mapping[str, Any],
    ) -> Candidate | None:
        """The last attempt's move with the warps scaled alike (`search_pairing`), when
        that attempt only resized a tile from the current version, ran correctly and was
        rolled back as slower, and was not itself such a pair."""
        last = self._last_move(record, metrics, searched)
        if last is None:
            return None
        chosen, planned = last
        attempt = record.attempts[-1]
        primary = next(iter(record.baseline), None)
        if (
            attempt.failed_correctness
            or "duration_us" not in attempt.measurements.get(primary or "", {})
            or chosen.get("paired")
        ):
            return None
        assert self.spec is not None
        version = record.current_version
        paired = untried_pair(
            planned,
            self.spec.knobs_for(version),
            self.spec.knob_values(version),
            metrics,
            searched.get("launched"),
            searched["rejected"],
            searched["tried_values"],
        )
        return self._retry_candidate(record, ranked, chosen, paired, paired=True)

    def _refit_retry(
        self,
        record: RunRecord,
        ranked: Sequence[Mapping[str, Any]],
        metrics: Mapping[str, float],
        searched: Mapping[str, Any],
    ) -> Candidate | None:
        """The last attempt's move with one pipeline stage fewer (`search_pairing.
        stages_alongside`), when that attempt grew a tile from the current version and its
        launch needed more shared memory than an SM has, and was not itself such a retry."""
        last = self._last_move(record, metrics, searched)
        if last is None:
            return None
        chosen, planned = last
        if chosen.get("refit") or not out_of_shared_memory(record.attempts[-1].reason):
            return None
        assert self.spec is not None
        version = record.current_version
        refit = stages_alongside(
            planned,
            self.spec.knobs_for(version),
            self.spec.knob_values(version),
            metrics,
            searched.get("launched"),
            searched["rejected"],
            searched["tried_values"],
        )
        return self._retry_candidate(record, ranked, chosen, refit, refit=True)

    def _earlier_losses(self, record: RunRecord) -> list[tuple[frozenset, frozenset]]:
        """(knob values it started from, knob change) of every catalog move that an earlier
        run of this kernel rolled back, read from the sibling run folders."""
        assert self.run_dir is not None
        out = []
        for other in sorted(self.run_dir.parent.glob(f"*/{STATE_FILE}")):
            if other.parent == self.run_dir:
                continue
            try:
                past = json.loads((other.parent / "record.json").read_text(encoding="utf-8"))
                moves = json.loads(other.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # a run folder being written, or not a run: nothing to learn from
            if past.get("kernel") != record.kernel or past.get("backend") != record.backend:
                continue
            for attempt in past.get("attempts", []):
                chosen = moves.get(str(attempt.get("iteration")))
                if attempt.get("status") != AttemptStatus.ROLLED_BACK.value or not chosen:
                    continue
                if "before" not in chosen or "all_values" not in chosen:
                    continue
                start = {**chosen["all_values"], **chosen["before"]}
                out.append(
                    (values_key(start), change_signature(chosen["before"], chosen["values"]))
                )
        return out

    # ------------------------------------------------------------------ Designer

    def propose(self, record: RunRecord, ranked: Sequence[Mapping[str, Any]]) -> Proposal:
        if self.store is None or self.spec is None:
            raise KbError("the catalog designer was not bound to a cycle")
        store, spec, version = self.store, self.spec, record.current_version
        family = spec.version_family(version)
        if family is None or not spec.knobs_for(version):
            raise DesignerUnavailable(
                f"{NO_MOVE} ({version} declares no knobs in {spec.name}'s spec)"
            )
        from kbopt.workflow.knob_source import settable_knobs

        if not settable_knobs(
            spec.version_path(version), [k.name for k in spec.knobs_for(version)]
        ):
            raise DesignerUnavailable(
                f"{NO_MOVE} ({version} sets none of its family's knobs in its source)"
            )
        tried, tried_values = self._tried(record)
        rejected = self._rejected(record)
        ranked = self._whole_ranking(record, ranked)
        why_not: list[str] = []
        metrics = profile_metrics(record)
        searched: dict[str, Any] = {
            "tried": tried,
            "tried_values": tried_values,
            "rejected": rejected,
            "launched": current_launch(record),
        }
        pair = self._paired_retry(record, ranked, metrics, searched)
        refit = self._refit_retry(record, ranked, metrics, searched)
        found = search_candidates(
            self.store, spec, version, ranked, metrics, why_not=why_not, **searched
        )
        reopened = False
        if not found and pair is None and refit is None and rejected and _at_the_fastest(record):
            # Nothing else is open: the changes rolled back from other values are tried
            # again from these (a larger tile lost with 4 warps and won with 8).
            here_only = self._rejected(record, here_only=True)
            if here_only != rejected:
                again = {**searched, "rejected": here_only}
                found = search_candidates(self.store, spec, version, ranked, metrics, **again)
                reopened = bool(found)
        if not found and pair is None and refit is None:
            detail = "; ".join(why_not[:8]) or "no entry in scope declares moves"
            details = [f"{version}: {detail}"]
            if rejected:  # say why a second run from the same values tries nothing
                details.append(
                    f"{len(rejected)} knob change(s) measured and rolled back, by this run "
                    "or by an earlier run of this kernel on this backend from these values "
                    "(runs/*/catalog-moves.json), are not tried again"
                )
            unresolved = left_to_the_kernel(why_not)
            if unresolved:
                stop = unplanned(version, unresolved, record.backend)
                raise DesignerUnavailable(stop, details=details)
            raise DesignerUnavailable(NO_MOVE, details=details)
        momentum = Momentum()
        if found:
            momentum = self._momentum(record)
            # A clear win is pushed once more even by a move whose measured preconditions
            # fail: the measurement, not the threshold, says the direction pays.
            found = momentum.with_pushes(
                found,
                lambda: candidates(store, spec, version, ranked, metrics, relax=True, **searched),
                lambda c: c.planned,
            )
            found = momentum.order(found, lambda c: c.planned)
        if pair is not None:  # by the pairing's measured record, among the others
            moves = record_for(self.root)
            found = place_pair(pair, found, moves, lambda c: candidate_score(c, moves, metrics))
        if refit is not None:  # next: the limit it ran into is the hardware's
            found = [refit, *found]
        best = found[0]
        rule = momentum.rule(best.planned)
        new_version = next_version(spec, family)
        values = spec.knob_values(version)
        state = self._state()
        state[str(len(record.attempts) + 1)] = {
            "entry": best.entry,
            "move": best.index,
            "rank": best.rank,
            "from_version": version,
            "new_version": new_version,
            "values": best.planned.values,
            "all_values": {**values, **best.planned.values},
            "before": {c.knob: c.before for c in best.planned.changes},
            "changes": [c.text() for c in best.planned.changes],
            "directions": sorted(directions(best.planned)),
            "unchecked": best.planned.unchecked,
            "relaxed": best.planned.relaxed,
            "paired": best.paired,
            "refit": best.refit,
            "momentum": rule,
        }
        self._save(state)
        unchecked = (
            f"; preconditions not measured: {', '.join(best.planned.unchecked)}"
            if best.planned.unchecked
            else ""
        )
        if best.refit:
            unchecked += (
                "; the same change did not fit in shared memory, now with one pipeline "
                f"stage fewer ({REFIT_NOTE})"
            )
        elif best.paired:
            unchecked += (
                f"; the same change measured slower alone, now with the warps scaled alike "
                f"({PAIRING_NOTE})"
            )
        elif best.planned.relaxed:
            unchecked += (
                "; every ranked move whose preconditions hold was measured, so this one is "
                "tried with its preconditions passed over"
            )
        if reopened:
            unchecked += (
                "; no other move was open, so this change, measured slower from other knob "
                "values in this run, is tried again from these"
            )
        why = (
            "not ranked for this profile (every ranked entry's moves were measured; the "
            "catalog's other entries are tried in order of bottleneck class and expected gain)"
            if best.opp.get("unranked")
            else f"ranked {best.label} by the strategy (trigger "
            f"{best.opp.get('trigger') or 'text match'})"
        )
        if rule:
            unchecked += f"; search rule '{rule}': {RULE_WHY[rule]}"
        measured = record_for(self.root).counts.get(candidate_key(best.entry, best.planned))
        if measured:
            unchecked += (
                f"; in this project's measured ablations this move beat the search's best so "
                f"far in {measured[1]} of {measured[0]} trials"
            )
        return Proposal(
            optimization=best.entry,
            new_version=new_version,
            language=self.language,
            title=str(best.opp.get("title", best.entry)),
            link=str(best.opp["path"]) if best.opp.get("path") else None,
            rationale=f"{why}; its move: {best.planned.text()}{unchecked}",
        )

    def _whole_ranking(
        self, record: RunRecord, ranked: Sequence[Mapping[str, Any]]
    ) -> Sequence[Mapping[str, Any]]:
        """The strategy's ranking past the plan's first entries, then the catalog's other
        entries with moves (`with_unranked`): the designer stops only when no entry has a
        move left, taking the ranked ones first, in the ranking's order."""
        from kbopt.contracts.profile import Profile

        if not record.profile or self.store is None:
            return ranked
        language = record.selected_language or self.language
        return search_order(Profile.parse(record.profile), self.store, language)

    def design(self, task: OptimizationTask, ctx: DesignContext) -> NewVersion:
        from kbopt.workflow.knob_source import write_version

        chosen = self._state().get(str(ctx.iteration))
        if chosen is None:
            raise KbError(f"no catalog move recorded for attempt {ctx.iteration}")
        spec = ctx.spec
        src = spec.version_path(chosen["from_version"])
        dst = spec.version_path(chosen["new_version"])
        values = dict(chosen["values"])
        spec.check_knobs(chosen["new_version"], chosen["all_values"])
        changes = [f"{chosen['entry']}: {c}" for c in chosen["changes"]]
        write_version(
            src,
            dst,
            values,
            version=chosen["new_version"],
            description=f"{chosen['from_version']} with {'; '.join(chosen['changes'])} "
            f"(catalog move of {chosen['entry']})",
        )
        # A designer checks its own correctness before handing back (A5).
        try:
            m = measure_with_backoff(ctx.backend, spec, chosen["new_version"], ctx.configs[0])
            correct = m.correct
            detail = f"rel. error {m.error:.3g}" if m.error is not None else ""
            if m.tolerance is not None and detail:
                detail += f" (tolerance {m.tolerance:g})"
        except VersionFailed as exc:  # written, but it raises when called (e.g. no fit)
            correct, detail = False, f"does not run: {exc}"[:300]
        except KbError:
            raise
        except Exception as exc:  # the new configuration does not compile or run
            correct, detail = False, f"does not run: {type(exc).__name__}: {exc}"[:300]
        return NewVersion(
            kernel=ctx.kernel,
            version=chosen["new_version"],
            changes=changes,
            created=[_rel(ctx.root, dst)],
            correct=correct,
            correctness_detail=detail,
            trials=[TrialCheck(dims=c.dims_dict, why=c.why or c.name) for c in ctx.configs],
            devlog_entry=_rel(ctx.root, ctx.devlog_path),
        )


def chosen_move(run_dir: Path, iteration: int) -> dict[str, Any] | None:
    """What the catalog designer applied at an attempt (None for other designers)."""
    path = run_dir / STATE_FILE
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    found = data.get(str(iteration))
    return dict(found) if found else None


def _rel(root: Path, p: Path) -> str:
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(p)
