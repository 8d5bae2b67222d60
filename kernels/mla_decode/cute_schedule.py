"""The static work list of the persistent CuTe DSL version (cute_v15), built on the host.

The grid is ``(row blocks, parts)``: CTA ``(r, g)`` computes the 64 query rows of row block
``r`` (of every sequence) over the KV range of *part* ``g``. A part's range is cut from all
sequences' KV tiles (64 cache rows each, counted over the cache's allocated length
``t_max``) laid end to end, sequence after sequence: every part gets at most
``ceil(batch * tiles / parts)`` of them, the fewest the busiest part can have, so every CTA
walks the same number of tiles (the last part fewer). Where a cut falls inside a sequence,
the sequence is split; each piece is one *item* ``(sequence, first tile, end tile, slot,
pieces)``; ``slot`` is the piece's index among that sequence's pieces (where its fp32 partial
and LSE go), ``pieces`` how many the sequence has (1: the item writes the final output). A
part's range is contiguous, so it holds at most one piece of any sequence, and a sequence's
pieces are consecutive parts.

Why row blocks are a grid dimension and not part of the cut: all row blocks of one sequence
read the same KV. With the row blocks of a part walking the same item list side by side, a KV
tile comes from DRAM once and is read by the other row blocks from L2 (cute_v7 gets the same
from its launch order). Parts = ``SMs // row blocks``, so the grid never exceeds the SMs
(decode b=32: 2 row blocks x 64 parts; speculative b=32, s=16: 32 row blocks x 4 parts) unless
a sequence has more row blocks than there are SMs (then one part, and more CTAs than SMs).

The cut ignores the sequences' actual lengths (``cache_seqlens``): the list is a function of
the shapes only, built once per shape outside the timed call. The kernel clips each item to
its sequence's length at run time; an item that starts past the end writes an empty partial
(zero, LSE -inf), as a split past the end does in cute_v7.

Pure Python (no torch, no GPU), so the CPU tests check it directly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ITEM_WORDS = 4  # int32 words per item in the kernel's list: sequence, first tile, end tile, slot
# and pieces share the fourth word: slot + PIECES_SHIFT * pieces
PIECES_SHIFT = 1 << 16


@dataclass(frozen=True)
class Item:
    seq: int
    tile_begin: int
    tile_end: int
    slot: int  # this piece's index among its sequence's pieces
    pieces: int  # how many pieces its sequence has (1: the item writes the final output)


@dataclass(frozen=True)
class WorkList:
    """``parts`` parts; part ``g`` runs ``items[offsets[g]:offsets[g + 1]]`` in order, once
    per row block."""

    parts: int
    tiles_per_part: int  # the budget: the busiest part's tile count
    offsets: tuple[int, ...]
    items: tuple[Item, ...]

    @property
    def max_pieces(self) -> int:
        return max((it.pieces for it in self.items), default=1)

    @property
    def items_offset(self) -> int:
        """Index of the first item word in :meth:`words` (the offsets, padded to 16 bytes)."""
        return math.ceil((self.parts + 1) / ITEM_WORDS) * ITEM_WORDS

    def words(self) -> list[int]:
        """The list as the kernel reads it (int32): ``parts + 1`` offsets, padded to
        :attr:`items_offset`, then :data:`ITEM_WORDS` words per item."""
        out = list(self.offsets) + [0] * (self.items_offset - len(self.offsets))
        for it in self.items:
            out += [it.seq, it.tile_begin, it.tile_end, it.slot + PIECES_SHIFT * it.pieces]
        return out


def balanced_work(batch: int, row_blocks: int, tiles: int, sms: int) -> WorkList:
    """Cut ``batch`` sequences of ``tiles`` KV tiles into parts with the same tile budget, at
    most ``max(1, sms // row_blocks)`` of them (see the module doc)."""
    if min(batch, row_blocks, tiles, sms) < 1:
        raise ValueError(
            f"need batch, row blocks, tiles and SMs >= 1, got {batch}, {row_blocks}, {tiles}, {sms}"
        )
    total = batch * tiles
    if total >= PIECES_SHIFT * PIECES_SHIFT // 2:
        raise ValueError(f"{total} KV tiles in all: more than the item encoding holds")
    budget = math.ceil(total / min(max(1, sms // row_blocks), total))
    parts = math.ceil(total / budget)
    # pieces of each sequence: the parts whose range meets [b * tiles, (b + 1) * tiles)
    pieces = [((b + 1) * tiles - 1) // budget - (b * tiles) // budget + 1 for b in range(batch)]
    offsets = [0]
    items: list[Item] = []
    for g in range(parts):
        flat, hi = g * budget, min((g + 1) * budget, total)
        while flat < hi:
            b = flat // tiles
            end = min(tiles, hi - b * tiles)
            slot = g - (b * tiles) // budget
            items.append(Item(b, flat - b * tiles, end, slot, pieces[b]))
            flat = b * tiles + end
        offsets.append(len(items))
    return WorkList(parts, budget, tuple(offsets), tuple(items))
