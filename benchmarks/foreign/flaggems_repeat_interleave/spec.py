"""FlagGems' repeat_interleave of a repeats tensor (FlagGems v5.0.2, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_repeat_interleave` and never committed.

Why this one as the set's index expansion: FlagGems replaces torch's `repeat_interleave`
with it when it is enabled, and an MoE layer that groups its rows by expert turns the
per-expert counts into each row's expert id (`torch.repeat_interleave(counts)`, the group
index of a grouped GEMM over expert-sorted rows).  FlagGems launches one single-warp program
per expert that writes its id count times, 32 ids per loop step, so the work per program is
as uneven as the routing: a hot expert's program loops hundreds of times while most of the
grid finishes at once, and a 256-program grid of one warp each fills a fraction of the GPU.
Both trials are DeepSeek-V3's routing (256 routed experts, top-8): a 64-token decode step
(512 rows, launch-sized) and a 16,384-token prefill (131,072 rows, large).  Counts and ids
are int64 whatever the spec's dtype; the running totals and the row count are computed
outside the timed call.  The floor is reading the counts and totals once and writing every
row's id once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_repeat_interleave")

CONTEXTS = ("memory-bound", "small-grid")
INT64 = 8  # counts, running totals and ids are int64 whatever the dtype


def bytes_moved(d: Mapping[str, int]) -> int:
    """Each expert's count and running total read once, each row's int64 id written once."""
    return 2 * INT64 * d["experts"] + INT64 * d["tokens"] * d["topk"]


def flops(d: Mapping[str, int]) -> int:
    """One subtraction per expert (its first row's offset); the rows are stores only."""
    return d["experts"]


_make_inputs = _common.forward_make_inputs(
    "flaggems_repeat_interleave", "tokens", "topk", "experts"
)
_reference = _common.forward_reference("flaggems_repeat_interleave")
_baselines = _common.forward_baselines(
    "flaggems_repeat_interleave",
    (
        "torch",
        "torch",
        "the same ids by torch.repeat_interleave (its cumsum and the host copy of the "
        "row count inside the call)",
        "torch_repeat_interleave",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_repeat_interleave.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 16, 32, 64, 128, 256, 512, 1024), "tile_n",
         "ids written per loop step of an expert's program; None: FlagGems' 32"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program (one per expert); None: FlagGems' 1"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_repeat_interleave",
    description=(
        "FlagGems' repeat_interleave of a repeats tensor (v5.0.2), each expert-sorted MoE "
        "row's expert id: one single-warp program per expert writes its id count times, 32 "
        "per loop step"
    ),
    dims=(
        Dim("tokens", "tokens routed in the step", "rows"),
        Dim("topk", "experts chosen per token"),
        Dim("experts", "routed experts (one program each)"),
    ),
    trials=(
        Trial(
            "deepseek_v3_expert_ids_decode64",
            {"tokens": 64, "topk": 8, "experts": 256},
            "DeepSeek-V3's expert id per sorted row for a 64-token decode step: 512 rows, "
            "256 programs of 1 warp, 8 kB moved",
        ),
        Trial(
            "deepseek_v3_expert_ids_prefill16k",
            {"tokens": 16384, "topk": 8, "experts": 256},
            "the same for a 16,384-token prefill: 131,072 rows (512 per expert on average, "
            "16 loop steps), 1.05 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # integer ids: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="repeat_interleave",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
