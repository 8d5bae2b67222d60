"""FlagGems' isin by binary search (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_isin` and never committed.

Why this one as the set's search: FlagGems replaces torch's `isin` with it when it is
enabled, and serving stacks check token ids against id lists (banned words, an allowed
vocabulary, stop tokens: `torch.isin(input_ids, ids)` in Hugging Face's logits processors).
Above 12288 elements FlagGems sorts the set and gives each program 512 ids that it
binary-searches together: log2(set) + 1 rounds, each a gathered load of the sorted set at
512 scattered positions, so the time is the latency of dependent gathers rather than
bandwidth.  Both trials check Llama-3.1-8B token ids against a set of 32,768 ids (16 rounds):
a 256-sequence decode step's new tokens (one program of 256 ids, launch-sized) and a
16 x 8192-token prefill batch (131,072 ids, 256 programs, large).  The ids are int64 and the
output bool whatever the spec's dtype; the set is sorted outside the timed call.  The floor
is reading the ids and the sorted set once and writing the mask once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_isin")

CONTEXTS = ("memory-bound", "small-grid")
ID_BYTES, BOOL = 8, 1  # int64 ids, a bool per id whatever the dtype


def bytes_moved(d: Mapping[str, int]) -> int:
    """The ids and the sorted set read once, one bool per id written."""
    return d["tokens"] * (ID_BYTES + BOOL) + d["set_size"] * ID_BYTES


def flops(d: Mapping[str, int]) -> int:
    """Three compares per id and search round (equal, less, greater)."""
    return 3 * d["tokens"] * (int(math.log2(d["set_size"])) + 1)


_make_inputs = _common.forward_make_inputs("flaggems_isin", "tokens", "set_size")
_reference = _common.forward_reference("flaggems_isin")
_baselines = _common.forward_baselines(
    "flaggems_isin",
    ("torch", "torch", "the same mask by torch.isin (which sorts in its call)", "torch_isin"),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_isin.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 64, 128, 256, 512, 1024, 2048, 4096), "tile_n",
         "ids searched together per tile (one gathered load of the set each per round); "
         "None: FlagGems' min(512, next_pow2(ids)) up to 2^20 ids"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program; None: FlagGems' 8 up to 2^22 ids"),
    Knob("programs", "int", (None, 33, 66, 132, 264, 528, 1056), "occupancy",
         "programs of the grid-stride loop over tiles (fewer means more tiles each); None: "
         "FlagGems' one per tile"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_isin",
    description=(
        "FlagGems' isin by binary search (v5.0.2), token ids checked against a sorted "
        "32,768-id set: each program searches 512 ids together, log2(set) + 1 rounds of "
        "gathered loads, one bool per id"
    ),
    dims=(
        Dim("tokens", "token ids checked", "rows"),
        Dim("set_size", "ids in the set (searched)"),
    ),
    trials=(
        Trial(
            "llama3_1_8b_isin_decode256",
            {"tokens": 256, "set_size": 32768},
            "Llama-3.1-8B's new tokens of a 256-sequence decode step against 32,768 ids: one "
            "program of 256 ids, 16 rounds, 0.26 MB moved (mostly the set)",
        ),
        Trial(
            "llama3_1_8b_isin_prefill128k",
            {"tokens": 131072, "set_size": 32768},
            "the prompt ids of a 16 x 8192-token prefill batch: 256 programs, 1.4 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    # block_m (tile_n) tiles the ids checked, not the set each lane searches.
    shape_metrics=lambda d: {"row_len": d["tokens"]},
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # a membership mask: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="isin",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
