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
next with the pipeline stages lowered by one, once, in both walks and in the catalog
designer (`stages_alongside`): the limit is the hardware's, not a guess.  On the H100,
Liger's SwiGLU gate/up GEMM could not take 64-row tiles after its walk had grown the column
and depth tiles (295 KB at two stages against 227 KB), while the random order's fastest
configuration was 64-row tiles at one stage.  Every tile counts here, the depth of a K step
too (it sizes both operands' buffers, though not the accumulator), and a resize already
paired with its warps is refitted the same way: on the H100, SGLang's lightning attention
could not take a 128-deep state step at three stages (329 KB), nor FlagGems' A @ A^T
128-row tiles with their warps doubled at two (262 KB).
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
# Roles whose size sets a stage's shared-memory buffers: the work per program, and the depth
# of a K step, which sizes both operands' tiles.
SHARED_MEMORY_ROLES = RESIZE_ROLES | {"tile_k"}
WARPS = "warps"
NOTE = "the same work per thread: the warps scaled with the tile"
STAGES = "pipeline_stages"
STAGES_NOTE = "the same tile in one stage fewer of the pipeline's shared-memory buffers"
# How a launch that needs more shared memory than an SM has fails (Triton's OutOfResources).
OUT_OF_SHARED_MEMORY = "out of resource: shared memory"


def _resize_sign(planned: PlannedMove) -> int | None:
    """+1 or -1 when `planned` only resizes (tiles, rows per program), all one way; else None."""
    if not set(planned.move.change) <= RESIZE_ROLES:
        return None
    signs = {sign for _, sign in directions(planned)}
    return signs.pop() if len(signs) == 1 else None


def _with_change(
    planned: PlannedMove,
    role: str,
    op: str,
    note: str,
    knobs: Sequence[Knob],
    values: Mapping[str, Any],
    metrics: Mapping[str, float],
    launched: Mapping[str, Any] | None,
) -> PlannedMove | None:
    """`planned`'s change with `role` changed by `op` as well, planned from `values`; None
    when the kernel has no knob of that role that can move so."""
    from kbopt.model import Move

    change = {**planned.move.change, role: op}
    paired = plan_move(Move(change=change, note=note), knobs, values, metrics, launched, relax=True)
    if isinstance(paired, NotApplicable) or not any(c.role == role for c in paired.changes):
        return None
    return paired


def _untried(
    paired: PlannedMove | None,
    values: Mapping[str, Any],
    rejected: Collection[Any],
    tried: Collection[frozenset],
) -> PlannedMove | None:
    """`paired`, unless it was rolled back already (its signature is in `rejected`) or the
    knob values it leads to were measured (in `tried`)."""
    if paired is None or paired.signature in rejected:
        return None
    if frozenset({**values, **paired.values}.items()) in tried:
        return None
    return paired


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
    sign = _resize_sign(planned)
    if sign is None:
        return None
    op = "x2" if sign > 0 else "/2"
    return _with_change(planned, WARPS, op, NOTE, knobs, values, metrics, launched)


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
    return _untried(paired, values, rejected, tried)


def out_of_shared_memory(error: str) -> bool:
    """Whether a failed measurement's error says the launch needed more shared memory than
    an SM has."""
    return OUT_OF_SHARED_MEMORY in error.lower()


def _grows_tiles_only(planned: PlannedMove) -> bool:
    """Whether `planned` grows at least one tile (shared-memory role) and shrinks none, with
    nothing else changed but the warps (a resize paired with its warps) and no stages."""
    roles = set(planned.move.change)
    tiles = roles & SHARED_MEMORY_ROLES
    if not tiles or not roles - tiles <= {WARPS}:
        return False
    by_knob = {c.knob: c.role for c in planned.changes}
    signs = {sign for knob, sign in directions(planned) if by_knob.get(knob) in tiles}
    return signs == {1}


def stages_alongside(
    planned: PlannedMove,
    knobs: Sequence[Knob],
    values: Mapping[str, Any],
    metrics: Mapping[str, float],
    launched: Mapping[str, Any] | None,
    rejected: Collection[Any],
    tried: Collection[frozenset],
) -> PlannedMove | None:
    """`planned` (a move that grows tiles and did not fit in shared memory) with the
    pipeline stages lowered by one, or None: when it shrinks a tile or changes anything but
    tiles and warps, the kernel has no stages knob that can go down, or the pair was rolled
    back or measured."""
    if not _grows_tiles_only(planned):
        return None
    paired = _with_change(planned, STAGES, "-1", STAGES_NOTE, knobs, values, metrics, launched)
    return _untried(paired, values, rejected, tried)
