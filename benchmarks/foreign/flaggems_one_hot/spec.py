"""FlagGems' one_hot (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel nobody here
wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_one_hot` and never committed.

Why this one as the set's index expansion: FlagGems replaces aten::one_hot with it when it
is enabled, and transformers' MoE blocks (Mixtral, Qwen3-MoE, DeepSeek-V3) build each
layer's expert mask with F.one_hot(top-k ids, num_classes=experts) in every forward, in
training and in inference alike.  One program per 32 ids (FlagGems' launch) loads them once,
then walks the classes 128 at a time, comparing and storing int64 ones and zeros: nothing
is loaded in the loop, so the kernel is its stores, eight bytes per class per id.
Store-bound.  Trials: a 64-token decode step of Qwen3-30B-A3B (top-8 of 128 experts: 512
ids, 16 programs of one class step, 0.53 MB moved) and an 8192-token prefill of
DeepSeek-V3 (top-8 of 256 routed experts: 65,536 ids, 2048 programs of two class steps,
134.7 MB moved).  The floor is reading the ids once and writing the output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_one_hot")

CONTEXTS = ("elementwise", "memory-bound")
INT64 = 8  # ids and output are int64 whatever the dtype


def bytes_moved(d: Mapping[str, int]) -> int:
    """Each int64 id read once, each int64 output element written once."""
    ids = d["tokens"] * d["topk"]
    return INT64 * ids + INT64 * ids * d["experts"]


def flops(d: Mapping[str, int]) -> int:
    """None counted: an integer comparison and a store per output element."""
    del d
    return 0


_make_inputs = _common.forward_make_inputs("flaggems_one_hot", "tokens", "topk", "experts")
_reference = _common.forward_reference("flaggems_one_hot")
_baselines = _common.forward_baselines(
    "flaggems_one_hot",
    ("torch", "torch", "the same mask by torch's F.one_hot with the class count", "torch_one_hot"),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_one_hot.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 8, 16, 32, 64, 128), "rows_per_program",
         "ids (output rows) per program; None: FlagGems' 32"),
    Knob("block_n", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "classes compared and stored per loop step; None: FlagGems' next power of two of "
         "the classes, at most 128"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default, 4 (FlagGems passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_one_hot",
    description=(
        "FlagGems' one_hot (v5.0.2, one_hot_kernel) of an MoE router's top-k expert ids: "
        "one program per 32 ids compares them with 128 classes per loop step and stores "
        "int64 ones and zeros"
    ),
    dims=(
        Dim("tokens", "tokens routed in the step", "rows"),
        Dim("topk", "experts chosen per token (ids per token)"),
        Dim("experts", "routed experts (the classes)", "row_len"),
    ),
    trials=(
        Trial(
            "qwen3_30b_a3b_expert_mask_decode64",
            {"tokens": 64, "topk": 8, "experts": 128},
            "Qwen3-30B-A3B's expert mask (transformers' Qwen3MoeSparseMoeBlock) for a "
            "64-token decode step: 512 ids of 128 experts, 16 programs of one class step, "
            "0.53 MB moved",
        ),
        Trial(
            "deepseek_v3_expert_mask_prefill8k",
            {"tokens": 8192, "topk": 8, "experts": 256},
            "DeepSeek-V3's expert mask (transformers' DeepseekV3MoE) for an 8192-token "
            "prefill: 65,536 ids of 256 routed experts, 2048 programs of two class steps, "
            "134.7 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # integer ones and zeros: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="one_hot",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
