"""FlagGems' radix sort (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_radix_sort` and never committed.

Why this one as the set's sort: FlagGems replaces torch's `sort` with it when it is
enabled, and vLLM's top-p sampler sorts every request's fp32 logits over the whole
vocabulary at every decode step (`logits.sort(dim=-1)`, ascending).  It is an LSD radix
sort, not a comparison sort: one launch builds each row's 4-bit digit histograms for all
eight passes at once (a [16 bins, 1024 columns] compare per step, the counts added
atomically), torch turns them into bin offsets, and then eight passes each scatter every
key and its column id to its place, the offsets inside a bin found by a decoupled
look-back over the earlier column tiles' status words (a program spins until its
predecessor has published).  Each pass reads and writes 12 bytes per element; at one row
the grid is 63 x 2 programs, so the decode trial is latency- and launch-bound (21
launches), the batch trial bandwidth-bound.  Both trials are Llama-3.1-8B's 128256-token
vocabulary: one sequence's decode step and a 64-sequence batch.  Outputs: the sorted fp32
values and their int64 columns, checked exactly against torch's stable sort.  The floor
is reading the logits once and writing the values and columns once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_radix_sort")

CONTEXTS = ("multi-kernel", "memory-bound")
KEY_BYTES = 4  # the sampler's logits are fp32 whatever the spec's dtype
BITS = 4  # FlagGems' bits per pass
PASSES = 32 // BITS


def bytes_moved(d: Mapping[str, int]) -> int:
    """The fp32 logits read once, the sorted fp32 values and int64 columns written once
    (the passes' round trips are not counted)."""
    return d["rows"] * d["columns"] * (KEY_BYTES + KEY_BYTES + 8)


def flops(d: Mapping[str, int]) -> int:
    """Digit compares, counted in the kernels' code at FlagGems' 4 bits: every element is
    compared with each of the 16 bins of every pass twice, once in the histogram and once
    in its pass's sweep."""
    return 2 * PASSES * 2**BITS * d["rows"] * d["columns"]


_make_inputs = _common.forward_make_inputs("flaggems_radix_sort", "rows", "columns")
_reference = _common.forward_reference("flaggems_radix_sort")
_baselines = _common.forward_baselines(
    "flaggems_radix_sort",
    (
        "torch",
        "torch",
        "the same ascending sort by torch's sort (CUB's segmented radix sort) on the fp32 logits",
        "torch_sort",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_radix_sort.launcher")


TRITON_KNOBS = (
    Knob("bits_per_pass", "int", (None, 2, 4, 8), "tile_k",
         "key bits sorted per pass, the depth of the key each pass consumes (2**bits bins; "
         "32 / bits passes over fp32 keys); None: FlagGems' 4"),
    Knob("hist_tile_n", "int", (None, 256, 512, 1024, 2048, 4096), "tile_n",
         "columns per histogram step; None: FlagGems' 1024"),
    Knob("hist_tiles_per_program", "int", (None, 1, 2, 4, 8, 16, 32), "tile_n",
         "histogram steps per program (its columns: this times hist_tile_n; fewer means "
         "more programs and more atomic adds); None: FlagGems' 8"),
    Knob("hist_tile_r", "int", (None, 2, 4, 8, 16), "tile_m",
         "bins per histogram step, the rows of its [bins, columns] compare tile (at most "
         "2**bits_per_pass); None: FlagGems' 16"),
    Knob("sweep_tile_n", "int", (None, 512, 1024, 2048, 4096, 8192), "tile_n",
         "columns per sweep program (fewer tiles make the look-back shorter); None: "
         "FlagGems' 2048"),
    Knob("sweep_tile_r", "int", (None, 1, 2, 4, 8, 16, 32, 64), "tile_m",
         "bins per sweep program (its loop; the rest go to other programs); None: "
         "FlagGems' 8"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per histogram program; None: Triton's default 4"),
    Knob("sweep_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per sweep program; None: Triton's default 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_radix_sort",
    description=(
        "FlagGems' radix sort (v5.0.2): one launch of atomically summed 4-bit digit "
        "histograms, then eight scatter passes whose in-bin offsets come from a decoupled "
        "look-back; fp32 keys ascending with int64 columns"
    ),
    dims=(
        Dim("rows", "rows sorted (sequences whose logits are sorted)"),
        Dim("columns", "columns per row (the vocabulary)", "row_len"),
    ),
    trials=(
        Trial(
            "topp_1seq_llama8b",
            {"rows": 1, "columns": 128256},
            "one sequence's top-p sort over Llama-3.1-8B's 128256-token vocabulary: 16 "
            "histogram programs, then 8 passes of 63 x 2 programs, 2 MB moved",
        ),
        Trial(
            "topp_batch64_llama8b",
            {"rows": 64, "columns": 128256},
            "a 64-sequence batch over the same vocabulary: 1024 histogram programs, then 8 "
            "passes of 4032 x 2 programs, 131 MB moved (each pass reads and writes 197 MB more)",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    # hist_tile_r and sweep_tile_r (tile_m) span a pass's bins, 2**bits (FlagGems' 4 bits:
    # 16), not the sequences (a grid axis); the tile_n knobs step along a row's columns
    shape_metrics=lambda d: {"rows": 2**BITS},
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # keys moved, not computed, and columns: exact
    tolerances={"bfloat16": 1e-9, "float16": 1e-9, "float32": 1e-9},
    entry_point="radix_sort",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
