"""The persistent version's work list (:mod:`kernels.mla_decode.cute_schedule`), CPU only.

What the kernel (cute_v15) relies on: every KV tile of every sequence is in exactly one
item; the parts' tile counts differ by the remainder only; a part holds at most one piece of a
sequence, so each (sequence, row block) counter gets ``pieces`` arrivals from different CTAs;
slots are ``0 .. pieces - 1``; and the int32 words the kernel reads encode the same list.
"""

from __future__ import annotations

import math

import pytest

from kernels.mla_decode.cute_schedule import (
    ITEM_WORDS,
    PIECES_SHIFT,
    WorkList,
    balanced_work,
)

SHAPES = [
    # (batch, row blocks, tiles, SMs)
    (32, 2, 64, 132),  # decode b=32, t=4096 on the H200
    (32, 32, 64, 132),  # speculative b=32, s=16
    (3, 2, 32, 132),  # the in-kernel merge test: one tile per part, 16 pieces
    (6, 32, 16, 132),  # parts that start inside a sequence: several items per CTA
    (5, 2, 7, 9),  # few SMs: several pieces and several items per part
    (1, 1, 1, 132),
    (7, 3, 13, 1),  # one SM
    (2, 300, 4, 132),  # more row blocks than SMs: one part
]


def _check(work: WorkList, batch: int, row_blocks: int, tiles: int, sms: int) -> None:
    total = batch * tiles
    assert work.parts == len(work.offsets) - 1 >= 1
    assert work.parts * row_blocks <= max(sms, row_blocks)  # one CTA per SM at most
    assert work.tiles_per_part == math.ceil(total / work.parts)
    covered: dict[int, list[int]] = {b: [] for b in range(batch)}
    pieces: dict[int, list[tuple[int, int]]] = {b: [] for b in range(batch)}
    counts = []
    for g in range(work.parts):
        items = work.items[work.offsets[g] : work.offsets[g + 1]]
        assert items, f"part {g} has no work"
        seqs = [it.seq for it in items]
        assert len(set(seqs)) == len(seqs), "a part holds two pieces of one sequence"
        counts.append(sum(it.tile_end - it.tile_begin for it in items))
        for it in items:
            assert 0 <= it.tile_begin < it.tile_end <= tiles
            covered[it.seq] += range(it.tile_begin, it.tile_end)
            pieces[it.seq].append((it.slot, it.pieces))
    assert all(sorted(t) == list(range(tiles)) for t in covered.values())
    for ps in pieces.values():  # slots 0..n-1, each piece knows n
        n = len(ps)
        assert sorted(ps) == [(i, n) for i in range(n)]
    assert max(counts) == work.tiles_per_part
    assert all(c == work.tiles_per_part for c in counts[:-1])  # only the last part is short


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "-".join(map(str, s)))
def test_every_tile_once_and_parts_balanced(shape: tuple[int, int, int, int]) -> None:
    _check(balanced_work(*shape), *shape)


def test_decode_is_cute_v7s_split_and_speculative_whole_sequences() -> None:
    decode = balanced_work(32, 2, 64, 132)
    assert (decode.parts, decode.tiles_per_part, decode.max_pieces) == (64, 32, 2)
    assert len(decode.items) == 64  # one item per CTA, as cute_v7's 128 CTAs
    spec = balanced_work(32, 32, 64, 132)
    assert (spec.parts, spec.tiles_per_part, spec.max_pieces) == (4, 512, 1)
    assert all(spec.offsets[g + 1] - spec.offsets[g] == 8 for g in range(4))


def test_several_items_per_part_when_cuts_fall_inside_sequences() -> None:
    work = balanced_work(6, 32, 16, 132)  # 4 parts of 24 tiles over 6 sequences of 16
    assert work.parts == 4 and work.max_pieces == 2
    assert [work.offsets[g + 1] - work.offsets[g] for g in range(4)] == [2, 2, 2, 2]


def test_words_encode_the_list_for_the_kernel() -> None:
    work = balanced_work(5, 2, 7, 9)
    words = work.words()
    off = work.items_offset
    assert off % ITEM_WORDS == 0 and off >= work.parts + 1
    # the kernel computes the offset from the part count alone
    assert off == (work.parts + ITEM_WORDS) // ITEM_WORDS * ITEM_WORDS
    assert words[: work.parts + 1] == list(work.offsets)
    assert len(words) == off + ITEM_WORDS * len(work.items)
    # the kernel's view holds every item: at most parts + batch - 1 of them
    assert len(work.items) <= work.parts + 5 - 1
    for i, it in enumerate(work.items):
        seq, begin, end, packed = words[off + ITEM_WORDS * i : off + ITEM_WORDS * (i + 1)]
        assert (seq, begin, end) == (it.seq, it.tile_begin, it.tile_end)
        assert (packed % PIECES_SHIFT, packed // PIECES_SHIFT) == (it.slot, it.pieces)


def test_bad_sizes_are_rejected() -> None:
    with pytest.raises(ValueError, match=">= 1"):
        balanced_work(0, 2, 64, 132)
    with pytest.raises(ValueError, match=">= 1"):
        balanced_work(2, 2, 64, 0)
