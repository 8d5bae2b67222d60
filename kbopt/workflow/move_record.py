"""What each catalog move found when it was measured: the record the catalog search orders
its moves by.

Every real-device `kbopt ablate` run in the project's `results/ablation/` holds the moves its
walking arms (`catalog`, `random`) measured, one per trial after the first.  A move
*advanced* the search when its trial was more than 1% faster than the arm's best so far.
The record counts, per move (an entry, its knob changes as role and direction, and whether
its measured preconditions held or were passed over), how many trials applied it and how
many advanced.

`MoveRecord.score` is the move's share of advancing trials, pulled toward the share over
all moves (a Beta prior of `PRIOR_TRIALS` trials at that base rate), so a move measured a few
times moves little from the base rate and one never measured sits at it.  On the committed
H200 runs, where the catalog arm's and the random order's first moves differed, the one the
record of the other kernels' runs scored higher advanced more often than the catalog arm's
own choice (`scripts/move_outcomes.py` counts it); so the catalog search, after the fired
anti-patterns, tries higher-scored moves first (`order_by_record`), the ranking's order
breaking ties.  The random arm stays random: it is the control.

A move's record is also kept per *wave band* of the values it moved from: the launch's
programs per SM (`ctas_per_sm`) under one, one to four, or four and more (`wave_band`).
Whether a move pays can depend on where it starts (a move that splits the work or shrinks
tiles may pay where the grid leaves SMs idle and not where it runs many waves), which the
pooled share cannot say.  `MoveRecord.score`, given the current values' metrics, pulls the move's share within
their band toward its pooled score (a prior of `BAND_PRIOR_TRIALS` trials); where the band is
unknown or never measured for that move, the pooled score stands.  Scored kernel by kernel
with each kernel's own runs left out, the banded score put a trial that advanced ahead of
one that did not, both moving from values in the same band and the same run, more often
than the pooled score did (`scripts/record_conditioning.py`).

Within each wave band, values at the register ceiling (`REGISTER_CEILING` registers per
thread or more) keep their own record (`record_band`): there a move that grows a tile or
the rows a thread holds over the same warps spills, and one that shrinks them or adds warps
frees registers, so the same move fares differently than from values with registers to
spare. Scored the same way, the wave band with the ceiling marked ordered the trials better
than the wave band alone (`scripts/record_conditioning.py`).

Each band is also marked when the kernel reuses what it loads (`REUSE_INTENSITY` flops a
byte or more: a matrix product's or attention's tiles) rather than streaming it (a norm, an
elementwise or quantizing pass): deeper pipelines and taller tiles paid on the first far more
often than on the second in the committed runs, and the mark ordered the trials better again
(`scripts/record_conditioning.py`).

Fake-backend files are left out (`kbopt.workflow.ablation.load_results`).  The repeats of a
resize with the warps scaled alike (a rule of the search, not an entry's move:
`search_pairing`) are counted apart, as one kind of move: on the committed H200 runs they
advanced about half as often as the other moves made at the same trial of the same arm
(`scripts/move_outcomes.py`, "Warps alongside"), so in a project with a record the pair is
tried only where its record scores above the next move's (`place_pair`), instead of always
coming next.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from kbopt.workflow.search_momentum import BAD_LOSS_PCT

ADVANCED_PCT = 1.0  # faster than the arm's best so far by more than this: the search advanced
PRIOR_TRIALS = 4.0  # the base rate counts as this many trials in every move's score
# A move's pooled score counts as this many trials in its score within one wave band: fewer
# let a band's handful of trials swing the order, more leave it at the pooled score (8 scored
# best of 2 to 32 in `scripts/record_conditioning.py`).
BAND_PRIOR_TRIALS = 8.0
WAVE_BANDS = ((1.0, "under one wave"), (4.0, "one to four waves"), (math.inf, "four waves or more"))
# Registers per thread from which a launch counts as at the register ceiling (255 on these
# GPUs): a move that adds per-thread state there spills, one that sheds it frees occupancy,
# so moves fare differently from such values; the record keeps them apart within each wave
# band (224 ordered the runs' moves best of seven lines from 128 to 255, scored as
# `scripts/record_conditioning.py` scores).
REGISTER_CEILING = 224
# Flops per byte (`arithmetic_intensity`: the spec's flops over the bytes it moves) from which
# a kernel counts as reusing its operands rather than streaming them.  Normalisations,
# elementwise and quantizing passes sit under 2, matrix products and attention in the tens to
# thousands; in the committed runs deeper pipelines and taller tiles advanced several times as
# often above the line as below it.  4 ordered the moves best of ten lines from 0.5 to 32 on
# the kernels first searched before 2026-12-06, and also beat the record without it on those
# searched after (`scripts/record_conditioning.py`, `results/moves/record-conditioning.md`).
REUSE_INTENSITY = 4.0

# "back at trial 7's values, " / "from the best so far, " / "rolled back before, tried again
# from the best values, " say from where, not which move.
_FROM = re.compile(
    r"^(back at trial \d+'s values, |from the best so far, "
    r"|rolled back before, tried again from the best values, )"
)
_SOURCE = re.compile(r"^(?:(?P<rank>#\d+)|warning \d+|unranked) ")
# a knob change's role and direction, as `KnobChange.text` ends: "(tile_n x2)"
_CHANGE = re.compile(r"\((\w+ [^()\s]+)\)")
RELAXED_MARK = "[preconditions not met"
_BAND_METRICS = ("ctas_per_sm", "registers_per_thread", "arithmetic_intensity")

Key = tuple[str, str, bool]  # entry, its changes ("tile_n x2 + warps /2"), passed over
T = TypeVar("T")


def record_band(
    metrics: Mapping[str, Any] | None,
    ceiling: float | None = REGISTER_CEILING,
    reuse: float | None = REUSE_INTENSITY,
) -> str | None:
    """The band a move's record is kept in for values with these metrics: their wave band
    (`wave_band`), marked when the launch sits at the register ceiling
    (`registers_per_thread` of `REGISTER_CEILING` or more) and when the kernel reuses what
    it loads (`arithmetic_intensity` of `REUSE_INTENSITY` or more); None where the wave band
    was not measured.  `ceiling` and `reuse` move those lines (None: no such mark), for
    `scripts/record_conditioning.py` to compare them."""
    band = wave_band(metrics)
    if band is None:
        return None
    marks = [band]
    regs = (metrics or {}).get("registers_per_thread")
    if ceiling is not None and isinstance(regs, int | float) and regs >= ceiling:
        marks.append(f"{ceiling:g} registers or more")
    intensity = (metrics or {}).get("arithmetic_intensity")
    if reuse is not None and isinstance(intensity, int | float) and intensity >= reuse:
        marks.append(f"{reuse:g} flops a byte or more")
    return ", ".join(marks)


def wave_band(metrics: Mapping[str, Any] | None) -> str | None:
    """The wave band of a launch's metrics (`WAVE_BANDS`, by `ctas_per_sm`: the grid's
    programs per SM), or None where that was not measured."""
    ctas = (metrics or {}).get("ctas_per_sm")
    if not isinstance(ctas, int | float) or not math.isfinite(ctas):
        return None
    return next(name for edge, name in WAVE_BANDS if ctas < edge)


def parse_move(move: str) -> dict[str, Any]:
    """A trajectory row's `move` text: where the move came from (a ranked opportunity, a
    fired anti-pattern, an entry the ranking left out, or the random order), the entry,
    its knob changes, whether it repeats a resize with the warps alongside, and whether
    its measured preconditions were passed over."""
    relaxed = RELAXED_MARK in move
    text = _FROM.sub("", move.split(f" {RELAXED_MARK}")[0])
    found = _SOURCE.match(text)
    if found is None:
        source = "random order"
    elif found.group("rank"):
        source = "ranked first" if found.group("rank") == "#1" else "ranked lower"
    else:
        source = "fired anti-pattern" if text.startswith("warning") else "unranked"
    text = _SOURCE.sub("", text)
    head, _, changes = text.partition(": ")
    entry, _, paired = head.partition(", ")
    return {
        "source": source,
        "entry": entry,
        "changes": sorted(_CHANGE.findall(changes)),
        "paired": paired == "warps alongside",
        "relaxed": relaxed,
    }


def trial_outcomes(docs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per move trial of a walking arm, oldest run first: the run (its index in
    `docs`), its kernel and configuration, whether it is the first run of that pair, the
    parsed move, and how much
    faster than the arm's best so far it was (`gain_pct`, None when it failed)."""
    seen: set[tuple[str, str]] = set()
    rows = []
    for run, doc in enumerate(docs):
        key = (str(doc.get("kernel")), str(doc.get("config", {}).get("name")))
        first_run = key not in seen
        seen.add(key)
        for arm in doc.get("rows", []):
            if arm.get("arm") not in ("catalog", "random"):
                continue
            best: float | None = None
            # Knob changes of this arm's moves measured far slower than its best so far.
            lost_badly: set[str] = set()
            # The time of the values the walk stands on (the next move starts there), and
            # of every trial, for a move that says it starts elsewhere.
            here: float | None = None
            timed: dict[int, float] = {}
            for trial in arm.get("trajectory", []):
                ok = trial.get("status") == "ok" and trial.get("duration_us")
                duration = float(trial["duration_us"]) if ok else None
                origin = _start_of(str(trial.get("move") or ""), here, best, timed)
                if int(trial.get("n", 0)) > 1 and trial.get("move") and best is not None:
                    gain = (best - duration) / best * 100 if duration is not None else None
                    move = parse_move(str(trial["move"]))
                    changes = set(move["changes"])
                    rows.append(
                        {
                            "kernel": key[0],
                            "config": key[1],
                            "run": run,
                            "file": doc.get("_file", ""),
                            "arm": arm["arm"],
                            "n": int(trial["n"]),
                            "first_run": first_run,
                            **move,
                            # None in runs made before the trials recorded it
                            "momentum": trial.get("momentum"),
                            "gain_pct": None if gain is None else round(gain, 2),
                            "repeats_a_bad_loss": bool(changes) and changes <= lost_badly,
                            # how close to its floor the values it moved from ran (None in
                            # runs made before the trials recorded their metrics)
                            "from_pct_of_floor": (trial.get("from_metrics") or {}).get(
                                "pct_of_floor"
                            ),
                            # the wave band of the values it moved from (None as above)
                            "from_waves": wave_band(trial.get("from_metrics")),
                            # the band its record is kept in: the wave band, marked at the
                            # register ceiling (`record_band`)
                            "from_band": record_band(trial.get("from_metrics")),
                            # what the band is made from, for comparing other lines
                            "from_band_metrics": {
                                k: v
                                for k, v in (trial.get("from_metrics") or {}).items()
                                if k in _BAND_METRICS
                            },
                            # how much slower than the arm's best so far the values it
                            # moved from ran (0: it moved from the best)
                            "from_below_best_pct": None
                            if origin is None
                            else round((origin - best) / best * 100, 2),
                        }
                    )
                    if gain is not None and gain < -BAD_LOSS_PCT:
                        lost_badly |= changes
                if duration is not None:
                    timed[int(trial.get("n", 0))] = duration
                # A kept move (the first trial is the start, kept) moves the walk; a rolled
                # back one leaves it where the move started.
                # (Runs made before the trials recorded whether they were kept: unknown.)
                if "kept" not in trial:
                    here = None
                elif trial["kept"] and duration is not None:
                    here = duration
                else:
                    here = origin
                if duration is not None and (best is None or duration < best):
                    best = duration
    return rows


_BACK_AT = re.compile(r"^back at trial (\d+)'s values, ")


def _start_of(
    move: str, here: float | None, best: float | None, timed: Mapping[int, float]
) -> float | None:
    """The time of the values a move started from: the best so far when its text says so,
    a trial's when it went back there, else where the walk stood."""
    if move.startswith(("from the best so far, ", "rolled back before, tried again from the")):
        return best
    back = _BACK_AT.match(move)
    if back:
        return timed.get(int(back.group(1)), here)
    return here


def advanced(row: Mapping[str, Any]) -> bool:
    gain = row.get("gain_pct")
    return gain is not None and gain > ADVANCED_PCT


def row_key(row: Mapping[str, Any]) -> Key:
    return (str(row["entry"]), " + ".join(row["changes"]), bool(row["relaxed"]))


@dataclass
class MoveRecord:
    """Per move, (trials, advanced); `base_rate`: the advancing share over all of them;
    `paired`: (trials, advanced) of the resizes repeated with the warps scaled alike;
    `banded`: per move and band of the values it moved from (`record_band`), (trials,
    advanced)."""

    counts: dict[Key, tuple[int, int]] = field(default_factory=dict)
    base_rate: float = 0.0
    runs: int = 0
    paired: tuple[int, int] = (0, 0)
    banded: dict[tuple[Key, str], tuple[int, int]] = field(default_factory=dict)

    @classmethod
    def from_rows(
        cls, rows: Iterable[Mapping[str, Any]], *, leave_out_kernel: str | None = None
    ) -> MoveRecord:
        """The record of `trial_outcomes` rows (a kernel's own runs left out on request:
        what a search would have known before it first met that kernel)."""
        counts: dict[Key, list[int]] = {}
        banded: dict[tuple[Key, str], list[int]] = {}
        runs: set[int] = set()
        paired = [0, 0]
        for row in rows:
            if not row["changes"] or row["kernel"] == leave_out_kernel:
                continue
            if row["paired"]:
                paired[0] += 1
                paired[1] += advanced(row)
                continue
            runs.add(int(row["run"]))
            c = counts.setdefault(row_key(row), [0, 0])
            c[0] += 1
            c[1] += advanced(row)
            band = row.get("from_band", row.get("from_waves"))
            if band:
                b = banded.setdefault((row_key(row), str(band)), [0, 0])
                b[0] += 1
                b[1] += advanced(row)
        trials = sum(n for n, _ in counts.values())
        hits = sum(a for _, a in counts.values())
        return cls(
            {k: (n, a) for k, (n, a) in counts.items()},
            hits / trials if trials else 0.0,
            len(runs),
            (paired[0], paired[1]),
            {k: (n, a) for k, (n, a) in banded.items()},
        )

    @classmethod
    def load(cls, root: Path) -> MoveRecord:
        """The record of the real ablation runs under `root` (empty when there are none)."""
        from kbopt.workflow.ablation import load_results  # it imports this module

        return cls.from_rows(trial_outcomes(load_results(root)))

    def score(self, key: Key, metrics: Mapping[str, Any] | None = None) -> float:
        """The move's advancing share, pulled toward the base rate (the base rate itself
        for a move never measured); with the metrics of the values it would move from, its
        share within their band (`record_band`), pulled toward that."""
        return self.score_in_band(key, record_band(metrics))

    def score_in_band(
        self, key: Key, band: str | None, prior_trials: float = BAND_PRIOR_TRIALS
    ) -> float:
        """`score` for values in the band `band` (`record_band`; None: the pooled score)."""
        pooled = self._pulled(*self.counts.get(key, (0, 0)))
        if band is None:
            return pooled
        trials, hits = self.banded.get((key, band), (0, 0))
        return (hits + prior_trials * pooled) / (trials + prior_trials)

    def pair_score(self) -> float:
        """`score` of the resizes repeated with the warps scaled alike, as one move."""
        return self._pulled(*self.paired)

    def _pulled(self, trials: int, hits: int) -> float:
        return (hits + PRIOR_TRIALS * self.base_rate) / (trials + PRIOR_TRIALS)

    def summary(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "moves": len(self.counts),
            "trials": sum(n for n, _ in self.counts.values()),
            "base_rate": round(self.base_rate, 4),
            "paired": {"trials": self.paired[0], "advanced": self.paired[1]},
            "banded_trials": sum(n for n, _ in self.banded.values()),
        }


def candidate_key(entry: str, planned: Any) -> Key:
    """A planned move's record key (`PlannedMove`: its changes' roles and directions)."""
    changes = sorted(f"{c.role} {c.op}" for c in planned.changes)
    return (entry, " + ".join(changes), bool(planned.relaxed))


def entry_move_rows(record: MoveRecord, entry: Any) -> list[dict[str, Any]]:
    """Per move an entry declares: its change (`Move.describe`) and what the record holds
    for it, `held` and `passed_over` as (trials, advanced), its measured preconditions held
    or passed over.  A move on a role several knobs share counts with its single form."""
    from kbopt.moves import shown_op

    rows = []
    for move in entry.moves:
        wanted = {f"{role} {shown_op(op)}" for role, op in move.change.items()}
        held, passed = [0, 0], [0, 0]
        for (name, changes, relaxed), (trials, hits) in record.counts.items():
            if name == entry.name and set(changes.split(" + ")) == wanted:
                into = passed if relaxed else held
                into[0] += trials
                into[1] += hits
        rows.append({"move": move.describe(), "held": tuple(held), "passed_over": tuple(passed)})
    return rows


_CACHE: dict[tuple[str, tuple[tuple[str, int], ...]], MoveRecord] = {}


def record_for(root: Path) -> MoveRecord:
    """`MoveRecord.load(root)`, kept while the results folder's files are unchanged."""
    folder = Path(root) / "results" / "ablation"
    stamp = tuple(
        sorted((p.name, p.stat().st_mtime_ns) for p in folder.glob("*.json"))
        if folder.is_dir()
        else ()
    )
    key = (str(Path(root).resolve()), stamp)
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = MoveRecord.load(root)
    return _CACHE[key]


def candidate_score(
    candidate: Any, record: MoveRecord, metrics: Mapping[str, Any] | None = None
) -> float | None:
    """A catalog candidate's (`catalog_designer.Candidate`) record score, within the wave
    band of `metrics` (the values it would move from) where given; None for a fired
    anti-pattern's move, which goes ahead of the others whatever its record."""
    if candidate.opp.get("warning"):
        return None
    return record.score(candidate_key(candidate.entry, candidate.planned), metrics)


def order_by_record(
    candidates: Sequence[Any], record: MoveRecord, metrics: Mapping[str, Any] | None = None
) -> list[Any]:
    """Fired anti-patterns' moves first (as the ranking placed them), then the rest by the
    record's score (within the wave band of `metrics`, the values they would move from),
    highest first; equal scores keep the order they came in."""
    position = {id(c): i for i, c in enumerate(candidates)}

    def sort_key(c: Any) -> tuple[int, float, int]:
        score = candidate_score(c, record, metrics)
        return (0, 0.0, position[id(c)]) if score is None else (1, -score, position[id(c)])

    return sorted(candidates, key=sort_key)


def place_pair(
    pair: T, others: Sequence[T], record: MoveRecord, score_of: Callable[[T], float | None]
) -> list[T]:
    """`others` with `pair` (a resize measured slower, repeated with the warps scaled
    alike) in its place: first in a project with no measured runs (the record knows
    nothing to put ahead of it), else before the first of `others` whose score
    (`score_of`; None for a fired anti-pattern's move, which keeps its place ahead) is
    lower than the pairing's own."""
    if not record.runs:
        return [pair, *others]
    mine = record.pair_score()
    for i, other in enumerate(others):
        score = score_of(other)
        if score is not None and score < mine:
            return [*others[:i], pair, *others[i:]]
    return [*others, pair]
