"""A tile resize that was measured slower, tried once more with the warps scaled alongside.

A move that doubles a tile (or the rows a program handles) over the same warps doubles each
thread's share of the work: twice the accumulator, twice the values loaded per thread.  One
that halves it leaves each thread half as much, or lanes idle.  Tuned launch tables move the
two together: the configurations of Triton's matrix-multiplication tutorial give a
128 x 256 tile eight warps and a 64 x 32 or 32 x 64 tile two.  So a resize can lose on its
own and win with the warps scaled by the same factor (the same work per thread): on the
H200, FlagGems' average pooling ran fastest with half the tile and half the warps of the
best that single moves reached (results/ablation/20261204T163029Z-*.json), and no single
move of the catalog changes both.

A knob search that measures such a resize slower than its best tries, next, the same change
with the warps scaled alike, once: the pair is not paired again.  The catalog search (the
ablation's catalog arm, `kbopt cycle --designer catalog`) tries it only where the pairing's
record in the project's measured ablations scores above the next move's
(`move_record.place_pair`): measured, it paid less often than the moves it displaced.

A tile grown past the shared memory of an SM does not compile at all (Triton: "out of
resource: shared memory"): a software-pipelined loop holds one copy of its tiles per stage,
so the same tile with one stage fewer needs a stage's worth less.  Such a resize is tried
next with the pipeline stages lowered by one, once, in both walks (`stages_alongside`): the
limit is the hardware's, not a guess.  On the H100, Liger's SwiGLU gate/up GEMM could not
take 64-row tiles after its walk had grown the column and depth tiles (295 KB at two stages
against 227 KB), while the random order's fastest configuration was 64-row tiles at one
stage.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kbopt.moves import NotApplicable, PlannedMove, plan_move
from kbopt.workflow.search_momentum import directions

if TYPE_CHECKING:
    from kbopt.kernel import Knob

# Roles whose size sets how much work one program, hence one thread, does.
RESIZE_ROLES = frozenset({"tile_m", "tile_n", "rows_per_program", "kv_tile"})
WARPS = "warps"
NOTE = "the same work per thread: the warps scaled with the tile"
STAGES = "pipeline_stages"
STAGES_NOTE = "the same tile in one stage fewer of the pipeline's shared-memory buffers"
# How a launch that needs more shared memory than an SM has fails (Triton's OutOfResources).
OUT_OF_SHARED_MEMORY = "out of resource: shared memory"


def warps_alongside(
    planned: PlannedMove,
    knobs: Sequence[Knob],
    values: Mapping[str, Any],
    metrics: Mapping[str, float],
    launched: Mapping[str, Any] | None = None,
) -> PlannedMove | None:
    """`planned` (a resize measured from `values`) with the warps scaled by the same
    factor, or None: when it changes anything but resize roles, changes them both ways, or
    the kernel has no warps knob that can move that way."""
    from kbopt.model import Move

    roles = set(planned.move.change)
    if not roles <= RESIZE_ROLES:
        return None
    signs = {sign for _, sign in directions(planned)}
    if len(signs) != 1:
        return None
    change = {**planned.move.change, WARPS: "x2" if signs == {1} else "/2"}
    paired = plan_move(Move(change=change, note=NOTE), knobs, values, metrics, launched, relax=True)
    if isinstance(paired, NotApplicable) or not any(c.role == WARPS for c in paired.changes):
        return None
    return paired


def untried_pair(
    planned: PlannedMove,
    knobs: Sequence[Knob],
    values: Mapping[str, Any],
    metrics: Mapping[str, float],
    launched: Mapping[str, Any] | None,
    rejected: Collection[Any],
    tried: Collection[frozenset],
) -> PlannedMove | None:
    """`warps_alongside`, unless the pair was rolled back already (its signature is in
    `rejected`) or the knob values it leads to were measured (in `tried`)."""
    paired = warps_alongside(planned, knobs, values, metrics, launched)
    if paired is None or paired.signature in rejected:
        return None
    if frozenset({**values, **paired.values}.items()) in tried:
        return None
    return paired


def out_of_shared_memory(error: str) -> bool:
    """Whether a failed measurement's error says the launch needed more shared memory than
    an SM has."""
    return OUT_OF_SHARED_MEMORY in error.lower()


def stages_alongside(
    planned: PlannedMove,
    knobs: Sequence[Knob],
    values: Mapping[str, Any],
    metrics: Mapping[str, float],
    launched: Mapping[str, Any] | None,
    rejected: Collection[Any],
    tried: Collection[frozenset],
) -> PlannedMove | None:
    """`planned` (a resize that grows a tile and did not fit in shared memory) with the
    pipeline stages lowered by one, or None: when it does not only grow resize roles, the
    kernel has no stages knob that can go down, or the pair was rolled back or measured."""
    from kbopt.model import Move

    roles = set(planned.move.change)
    if not roles <= RESIZE_ROLES or {sign for _, sign in directions(planned)} != {1}:
        return None
    change = {**planned.move.change, STAGES: "-1"}
    paired = plan_move(
        Move(change=change, note=STAGES_NOTE), knobs, values, metrics, launched, relax=True
    )
    if isinstance(paired, NotApplicable) or not any(c.role == STAGES for c in paired.changes):
        return None
    if paired.signature in rejected or frozenset({**values, **paired.values}.items()) in tried:
        return None
    return paired
