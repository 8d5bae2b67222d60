"""The order in which a knob search tries the moves open to it, after what it has measured.

A catalog search (`kbopt ablate`'s walks, `kbopt cycle --designer catalog`) takes moves in
the ranking's order; four rules from what the search has already measured reorder them,
as a pattern search does:

- **push on**: a move kept and more than `CLEAR_GAIN_PCT` faster than the search's best so
  far is a clear win; a move in the same directions (the same knob raised, or lowered,
  once more) goes first from the values it reached, even one whose measured preconditions
  fail (the measurement says the direction pays);
- **do not undo a win**: a move that only reverses directions that once won clearly goes
  after every other move;
- **flat directions**: a move kept without being faster marks its directions; the same
  directions again go last until some move is faster;
- **the other way**: a move more than `CLEAR_LOSS_PCT` slower than the best so far says
  the knob it moved may pay in the opposite direction; a move that only reverses its
  directions goes first (with a push, before the rest), even one whose measured
  preconditions fail, until the search keeps a move.  A pattern search probes both ways
  along a coordinate; here the opposite way comes first once the ranked way has clearly
  lost (on the H200, FlagGems' cumsum, max pooling and bicubic resize each lost with a
  ranked tile doubling and gained with the halving the search reached later).  Reversing a
  clear win is not the other way: such a move still waits;
- **lost badly before**: a move more than `BAD_LOSS_PCT` slower than the best so far marks
  its directions for the rest of the search, from any values (a walk that goes back to
  earlier values keeps this, though it forgets the other rules): a move only in those
  directions goes after every other, until one of them is kept with a clear gain.  On an
  H100, FlagGems' fused GDN prologue doubled its warps from five different values, 58-72%
  slower each time, with five of its 24 trials.

A direction is (knob, +1 or -1), read from a planned move's knob changes (from the value
the knob launched with where it was left unset).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from kbopt.moves import PlannedMove

# A kept move at least this much faster than the best so far is a clear win (a gain under
# 1% is within what one measurement moves on the H200 for most kernels).
CLEAR_GAIN_PCT = 1.0
# A move at least this much slower than the best so far is a clear loss: well past the
# slowdown a walk keeps (a plateau's noise), so the direction, not the noise, lost.
CLEAR_LOSS_PCT = 10.0
# A move at least this much slower than the best so far lost badly: its directions go last
# for the rest of the search, from any values.  In the committed runs, a move whose every
# change had already lost this badly earlier in the same arm advanced far less often than
# the other moves (results/moves/move-outcomes.md, the table "by whether every change of the
# move had lost badly earlier in the run").
BAD_LOSS_PCT = 50.0
# A move kept while more than this much slower than the search's best leaves it on a plateau
# below the best: the next move goes from the best values while one is open there (both
# ablation walks, and the catalog designer's cycle).  In the recorded real runs, moves made
# from values over 1% slower than the best beat it far less often than moves made from the
# best at the same trial, even after two moves had been rolled back there
# (results/moves/move-outcomes.md, the table "by where the move started").
PLATEAU_PCT = 1.0

Direction = tuple[str, int]
T = TypeVar("T")


def directions(planned: PlannedMove) -> set[Direction]:
    """(knob, +1 or -1) for each numeric knob the move raises or lowers."""
    out = set()
    for c in planned.changes:
        before = c.launched if c.before is None else c.before
        numeric = all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in (before, c.after)
        )
        if numeric and c.after != before:
            out.add((c.knob, 1 if c.after > before else -1))
    return out


def pushes_only(planned: PlannedMove, among: Collection[Direction]) -> bool:
    """Whether the move changes something and every change is one of `among`'s directions."""
    dirs = directions(planned)
    return bool(dirs) and dirs <= set(among)


PUSH, FLAT, UNDOES_A_WIN, OTHER_WAY = "push on", "flat", "undoes a win", "the other way"
LOST_BADLY = "lost badly before"
RULE_RANK = {PUSH: 0, OTHER_WAY: 0, "": 1, UNDOES_A_WIN: 2, FLAT: 3, LOST_BADLY: 4}
# Why a rule placed a move where it is, in words a run's record can show beside the move.
RULE_WHY = {
    PUSH: "the last kept move was a clear win, so the same direction goes first once more",
    OTHER_WAY: "a move measured clearly slower, so its opposite direction goes first",
    UNDOES_A_WIN: "it only reverses a direction that won clearly, so it waits behind the rest",
    FLAT: "its direction was kept without a gain, so it waits until some move is faster",
    LOST_BADLY: "its direction ran far slower earlier in this search, so it goes last",
}


@dataclass
class Momentum:
    """What the search's measurements say about directions (see the module docstring)."""

    push: set[Direction] = field(default_factory=set)
    uphill: set[Direction] = field(default_factory=set)
    flat: set[Direction] = field(default_factory=set)
    reverse: set[Direction] = field(default_factory=set)
    lost_badly: set[Direction] = field(default_factory=set)

    def carried_over(self) -> Momentum:
        """What a search moved back to earlier values still knows: the directions that
        lost badly (the other rules read the values it left)."""
        return Momentum(lost_badly=set(self.lost_badly))

    def measured(self, moved: Iterable[Direction], kept: bool, gain_pct: float) -> None:
        """Update after one measured move: `gain_pct` is how much faster than the best so
        far it ran (negative when slower), `kept` whether the search went on from it."""
        moved = set(moved)
        if kept and gain_pct > CLEAR_GAIN_PCT:
            self.lost_badly -= moved  # measured faster now: the bad loss was the values'
            self.push = moved
            self.uphill = (self.uphill - moved) | {(knob, -sign) for knob, sign in moved}
        else:
            self.push = set()  # pushed once more without a clear gain, or something else
        if kept:
            self.reverse = set()  # the search moved on: what lost was measured elsewhere
            if gain_pct > 0:
                self.flat.clear()  # the ground moved: every direction is worth a look again
            else:
                self.flat |= moved
        elif gain_pct < -CLEAR_LOSS_PCT:
            self.reverse |= {(knob, -sign) for knob, sign in moved}
            if gain_pct < -BAD_LOSS_PCT:
                self.lost_badly |= moved

    def rule(self, planned: PlannedMove) -> str:
        """Which of the rules places `planned` (a key of `RULE_RANK`; "" for none): what a
        trial records, so that each rule's moves can be counted apart (move_outcomes.py)."""
        if pushes_only(planned, self.push):
            return PUSH
        if pushes_only(planned, self.lost_badly):
            return LOST_BADLY
        if pushes_only(planned, self.flat):
            return FLAT
        if pushes_only(planned, self.uphill):
            return UNDOES_A_WIN
        return OTHER_WAY if pushes_only(planned, self.reverse) else ""

    def rank(self, planned: PlannedMove) -> int:
        """0: pushes on, or goes the other way from a clear loss; 1: anything else; 2: only
        undoes a clear win; 3: only flat; 4: only directions that lost badly."""
        return RULE_RANK[self.rule(planned)]

    def _leads(self, planned: PlannedMove) -> bool:
        """Whether a move whose preconditions fail is still worth adding: it pushes a clear
        win on, or goes the other way from a clear loss without undoing a win."""
        if pushes_only(planned, self.push):
            return True
        if pushes_only(planned, self.lost_badly):
            return False
        return pushes_only(planned, self.reverse) and not pushes_only(planned, self.uphill)

    def with_pushes(
        self, items: list[T], relaxed: Callable[[], list[T]], planned: Callable[[T], PlannedMove]
    ) -> list[T]:
        """`items`, and while a clear win is pushed or a clear loss points the other way,
        the moves of `relaxed()` (those whose measured preconditions fail) that lead there
        and are not among them already."""
        if not self.push and not self.reverse:
            return items
        seen = {planned(item).signature for item in items}
        return items + [
            item
            for item in relaxed()
            if planned(item).signature not in seen and self._leads(planned(item))
        ]

    def order(self, items: list[T], planned: Callable[[T], PlannedMove]) -> list[T]:
        """`items` in their order, reordered by `rank` (a stable sort: ties keep it)."""
        return sorted(items, key=lambda item: self.rank(planned(item)))
