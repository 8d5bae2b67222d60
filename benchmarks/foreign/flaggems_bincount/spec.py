"""FlagGems' bincount (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel nobody here
wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
flaggems_bincount` and never committed.

Why this one: FlagGems replaces torch's `bincount` with it when it is enabled, and an MoE
layer counts the tokens each expert received at every step (the per-expert token counts
that expert-parallel load balancing and capacity checks read:
`torch.bincount(topk_ids.flatten(), minlength=num_experts)`).  Unweighted, FlagGems takes
one fused pass: one program per BLOCK_SIZE ids folds the block's largest id into one int64
word with an atomic max and adds 1 per id into an int64 histogram with an atomic add, so
with a few hundred experts every count is hit by many programs at once; the histogram is
pre-sized before the max is known (at least 8192 int64 counts, up to 65536) and zero-filled
per call, so at decode sizes the fills, not the ids, are most of the bytes.  Trials: a
Qwen3-30B-A3B decode step (32 tokens, top-8 of 128: 256 ids, one 256-id program, 2 warps)
and a Kimi-K2 16,384-token prefill (top-8 of 384: 131,072 ids, 128 programs of 1024).  The
ids are int64 and the counts int64 whatever the spec's dtype.  The floor is reading every id
once and zero-filling and writing the pre-sized histogram once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from foreign.flaggems_bincount.launcher import pre_size
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_bincount")

CONTEXTS = ("reduction", "multi-kernel", "small-grid")  # the decode trial: one program
INT64 = 8


def bytes_moved(d: Mapping[str, int]) -> int:
    """Every int64 id read once, the pre-sized int64 histogram written once (its zero fill)
    and the max word."""
    n = d["tokens"] * d["topk"]
    return INT64 * (n + pre_size(n, d["experts"]) + 1)


def flops(d: Mapping[str, int]) -> int:
    """One compare (the max) and one add per id."""
    return 2 * d["tokens"] * d["topk"]


_make_inputs = _common.forward_make_inputs("flaggems_bincount", "tokens", "topk", "experts")
_reference = _common.forward_reference("flaggems_bincount")
_baselines = _common.forward_baselines(
    "flaggems_bincount",
    ("torch", "torch", "torch.bincount with minlength = experts", "torch_bincount"),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_bincount.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 128, 256, 512, 1024, 2048, 4096), "tile_n",
         "ids per program (the atomics one program issues); None: FlagGems' _select_params "
         "choice by the id count (256 up to 1024 ids, 512 up to 4096, else 1024)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: FlagGems' _select_params choice (2 up to 256 ids, else 4)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_bincount",
    description=(
        "FlagGems' bincount (v5.0.2) of an MoE router's top-k expert ids: one fused pass of "
        "an atomic max of the largest id and one int64 atomic add per id into a pre-sized, "
        "zero-filled histogram"
    ),
    dims=(
        Dim("tokens", "tokens routed in the step", "rows"),
        Dim("topk", "experts chosen per token"),
        Dim("experts", "routed experts (the histogram's minlength)"),
    ),
    trials=(
        Trial(
            "qwen3_30b_a3b_decode32",
            {"tokens": 32, "topk": 8, "experts": 128},
            "Qwen3-30B-A3B's per-expert token counts for a 32-token decode step: 256 ids, one "
            "program of 256 with 2 warps, an 8192-count histogram zero-filled (launch-sized)",
        ),
        Trial(
            "kimi_k2_prefill16k",
            {"tokens": 16384, "topk": 8, "experts": 384},
            "Kimi-K2's (384 routed experts, top-8) for a 16,384-token prefill: 131,072 ids, "
            "128 programs of 1024 with 4 warps into 384 hot counts of a 65,536-count histogram",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # integer counts: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="bincount",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
