"""FlagGems' cumsum along the last dimension (FlagGems v5.0.2, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_cumsum` and never committed.

Why this one as the set's scan: FlagGems replaces torch's `cumsum` with it when it is
enabled, and top-p (nucleus) sampling takes a running total of every sequence's sorted
probabilities over the whole vocabulary at each decode step (vLLM's `apply_top_k_top_p`:
sort, softmax, cumsum, then a compare against 1 - p).  A 128k row is longer than one
program's tile, so FlagGems scans it in three launches (reduce, then scan): up to 4 x SMs
programs per row each sum their 4096-column tiles, one program per row scans those sums,
then every program re-reads its tiles and writes their scans offset by its prefix.  At
Llama-3.1-8B's 128,256 tokens a row is 32 tiles (32 programs per row, one tile each), so a
single sequence occupies 32 of 132 SMs.  Both trials are Llama-3.1-8B's top-p step: one
sequence (launch-sized) and a 64-sequence decode batch (large).  Input and output are fp32
whatever the spec's dtype (the sampler's probabilities).  The floor is reading the
probabilities once and writing their running totals once (the kernels read them twice).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_cumsum")

CONTEXTS = ("memory-bound", "multi-kernel")
FP32 = 4  # the probabilities and their totals are fp32 whatever the dtype


def bytes_moved(d: Mapping[str, int]) -> int:
    """The fp32 probabilities read once and their fp32 running totals written once."""
    return 2 * FP32 * d["rows"] * d["vocab"]


def flops(d: Mapping[str, int]) -> int:
    """One add per value for the scan (the block sums' adds not counted)."""
    return d["rows"] * d["vocab"]


_make_inputs = _common.forward_make_inputs("flaggems_cumsum", "rows", "vocab")
_reference = _common.forward_reference("flaggems_cumsum")
_baselines = _common.forward_baselines(
    "flaggems_cumsum",
    ("torch", "torch", "the same running totals by torch's cumsum in fp32", "torch_cumsum"),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_cumsum.launcher")


TRITON_KNOBS = (
    Knob("tile_size", "int", (None, 512, 1024, 2048, 4096, 8192, 16384), "tile_n",
         "columns per tile of the block sums and the block scans (a program loops over "
         "its tiles); None: FlagGems' min(4096, next_pow2(vocab))"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program of all three launches; None: FlagGems' 8 above 2048-column "
         "tiles, else 4"),
    Knob("programs_per_row", "int", (None, 4, 8, 16, 32, 64, 128, 528), "splits",
         "most programs one row is split over (fewer means more tiles each); None: "
         "FlagGems' 4 x the SM count (so one per tile at these widths)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_cumsum",
    description=(
        "FlagGems' cumsum over the last dimension (v5.0.2), top-p's running total of sorted "
        "fp32 probabilities: per-program tile sums, a scan of them per row, then each "
        "program's tiles scanned from its prefix (three launches)"
    ),
    dims=(
        Dim("rows", "sequences sampled (rows)", "rows"),
        Dim("vocab", "vocabulary size (columns scanned)", "row_len"),
    ),
    trials=(
        Trial(
            "llama3_1_8b_topp_1seq",
            {"rows": 1, "vocab": 128256},
            "Llama-3.1-8B's top-p running total for one sequence's decode step: 32 programs "
            "of one 4096-column tile, 1 MB moved",
        ),
        Trial(
            "llama3_1_8b_topp_64seq",
            {"rows": 64, "vocab": 128256},
            "the same for a 64-sequence decode batch: 2048 programs, 66 MB moved",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # fp32 sums of up to 128k values in a different order than the fp64 reference
    tolerances={"bfloat16": 1e-5, "float16": 1e-5, "float32": 1e-5},
    entry_point="cumsum",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
