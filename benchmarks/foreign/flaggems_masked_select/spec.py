"""FlagGems' masked_select (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_masked_select` and never committed.

Why this one as the set's stream compaction: FlagGems replaces torch's `masked_select`
(what `x[mask]` reaches on a bool mask) with it when it is enabled, and models pick rows
out of a batch with it: the hidden states of the sequences still running, or the real
tokens of a padded batch.  The output's length depends on the data, so it is two passes
over the input with a device-to-host copy between them: one program per SM counts its run
of 4096-element blocks, the last to finish (an atomic ticket) scans the counts into
offsets; then every program scans each block's mask again and scatters the kept values to
their positions.  The mask is a full bool tensor (one byte per element), read twice.  Both
trials are Llama-3.1-8B's hidden states (4096 wide): the 48 live sequences of a 64-slot
decode batch (launch-sized: 64 blocks, one per program) and the 24,576 real tokens of a
16 x 2048 padded prefill batch (large: 32,768 blocks over 132 programs).  Output: the kept
values, flat, in the dtype.  The floor is reading x and the mask once and writing the kept
values once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_masked_select")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("memory-bound", "multi-kernel")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x (dtype) and the bool mask read once, the kept values written once."""
    es = ELEMENT_SIZE[dtype]
    return d["rows"] * d["hidden"] * (es + 1) + d["live"] * d["hidden"] * es


def flops(d: Mapping[str, int]) -> int:
    """One add per element for the mask's scan (counted once)."""
    return d["rows"] * d["hidden"]


_make_inputs = _common.forward_make_inputs("flaggems_masked_select", "rows", "hidden", "live")
_reference = _common.forward_reference("flaggems_masked_select")
_baselines = _common.forward_baselines(
    "flaggems_masked_select",
    (
        "torch",
        "torch",
        "the same selection by torch's masked_select in the input dtype",
        "torch_masked_select",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_masked_select.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 512, 1024, 2048, 4096, 8192, 16384), "tile_n",
         "elements per block, the span of one mask scan (a program walks its run of "
         "blocks); None: FlagGems' next power of two of the elements, clamped to 128..4096"),
    Knob("num_warps", "int", (None, 2, 4, 8, 16, 32), "warps",
         "warps per program of both launches; None: FlagGems' min(16, block_size / 32)"),
    Knob("programs", "int", (None, 33, 66, 132, 264, 528, 1056), "occupancy",
         "programs the input is split over (each owns a run of consecutive blocks; the "
         "last scans all their counts in one tile); None: FlagGems' one per SM"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_masked_select",
    description=(
        "FlagGems' masked_select (v5.0.2): per-program counts of a bool mask scanned by the "
        "last program (an atomic ticket), the total copied to the host to size the output, "
        "then each block's mask scanned again to scatter the kept values (three launches)"
    ),
    dims=(
        Dim("rows", "rows of the batch (sequences or token positions)", "rows"),
        Dim("hidden", "hidden size (elements per row)"),
        Dim("live", "rows the mask keeps"),
    ),
    trials=(
        Trial(
            "llama3_1_8b_decode_64slots",
            {"rows": 64, "hidden": 4096, "live": 48},
            "Llama-3.1-8B's hidden states of the 48 live sequences of a 64-slot decode "
            "batch: 64 blocks of 4096, one program each, 1.2 MB moved",
        ),
        Trial(
            "llama3_1_8b_padded_prefill_16x2048",
            {"rows": 32768, "hidden": 4096, "live": 24576},
            "the 24576 real tokens of a 16 x 2048 right-padded prefill batch: 32768 blocks "
            "over 132 programs, 604 MB moved",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    # A block is a span of the whole flattened input (rows x hidden), its programs' runs too.
    shape_metrics=lambda d: {"row_len": d["rows"] * d["hidden"]},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # copies of input values: any error is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="masked_select",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
