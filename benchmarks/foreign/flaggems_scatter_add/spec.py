"""FlagGems' scatter_add_ along the last dimension (FlagGems v5.0.2, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_scatter_add` and never committed.

Why this one as the set's atomics: FlagGems replaces torch's `scatter_add_` with it when it
is enabled, and an MoE layer sums its router's gate weights per expert at every step (the
expert load that balancing reads: `load.scatter_add_(0, topk_ids.flatten(),
topk_weights.flatten())`).  When the index covers the whole last dimension FlagGems takes a
flat kernel: one program per 256 routed pairs adds each fp32 weight into its expert's total
with a relaxed atomic, so with 256 experts every total is hit by many programs at once and
the atomics, not the bytes, set the time.  Both trials are DeepSeek-V3's router (256 routed
experts, top-8): a 64-token decode step (512 pairs, two programs: launch-sized) and a
16,384-token prefill (131,072 pairs, 512 programs: large).  The ids are int64 and the
weights and totals fp32 whatever the spec's dtype.  The floor is reading every id and
weight once and writing the totals once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_scatter_add")

CONTEXTS = ("reduction", "multi-kernel")
ID_BYTES, FP32 = 8, 4  # int64 expert ids, fp32 weights and totals whatever the dtype


def bytes_moved(d: Mapping[str, int]) -> int:
    """Every routed pair's int64 id and fp32 weight read once, the fp32 totals written once."""
    return d["tokens"] * d["topk"] * (ID_BYTES + FP32) + d["experts"] * FP32


def flops(d: Mapping[str, int]) -> int:
    """One add per routed pair."""
    return d["tokens"] * d["topk"]


_make_inputs = _common.forward_make_inputs("flaggems_scatter_add", "tokens", "topk", "experts")
_reference = _common.forward_reference("flaggems_scatter_add")
_baselines = _common.forward_baselines(
    "flaggems_scatter_add",
    (
        "torch",
        "torch",
        "the same per-expert totals by torch's zeros and scatter_add_ in fp32",
        "torch_scatter_add",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_scatter_add.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 64, 128, 256, 512, 1024, 2048, 4096), "tile_n",
         "routed pairs per block (one atomic add each); None: FlagGems' 256"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (FlagGems passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_scatter_add",
    description=(
        "FlagGems' scatter_add_ over the last dimension (v5.0.2), an MoE router's per-expert "
        "load: one program per 256 routed pairs adds each fp32 gate weight into its "
        "expert's total with a relaxed atomic (the totals zeroed first)"
    ),
    dims=(
        Dim("tokens", "tokens routed in the step", "rows"),
        Dim("topk", "experts chosen per token"),
        Dim("experts", "routed experts (totals)"),
    ),
    trials=(
        Trial(
            "deepseek_v3_load_decode64",
            {"tokens": 64, "topk": 8, "experts": 256},
            "DeepSeek-V3's per-expert load for a 64-token decode step: 512 pairs into 256 "
            "totals, 2 programs, 7 kB moved",
        ),
        Trial(
            "deepseek_v3_load_prefill16k",
            {"tokens": 16384, "topk": 8, "experts": 256},
            "the same for a 16,384-token prefill: 131,072 pairs, 512 programs, about 512 "
            "atomic adds per total, 1.6 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # fp32 sums of up to thousands of weights in atomic (any) order against fp64
    tolerances={"bfloat16": 1e-5, "float16": 1e-5, "float32": 1e-5},
    entry_point="scatter_add",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
