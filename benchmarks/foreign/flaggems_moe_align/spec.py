"""FlagGems' MoE block alignment (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: kernels
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_moe_align` and never committed.

Why this one: every fused-MoE layer sorts its routed (token, expert) pairs by expert before
the grouped GEMM, each expert's rows padded to the GEMM's BLOCK_SIZE_M so that no M tile
mixes two experts; FlagGems patches vLLM's `_moe_C.moe_align_block_size` with its Triton
`moe_align_block_size_triton` (and its own fused_moe calls it), so a model served on vLLM
with FlagGems runs it once per MoE layer and step.  With stock Triton (no FlagTree TLE) it
is a counting sort in four launches after a zero fill: one program per expert counts its
slice of the flat ids into its own row of an experts x experts int32 scratch with atomic
adds (and fills its share of the outputs with numel and 0), one program per expert column
turns the rows into a running sum with tl.cumsum, one program rounds the totals up to the
block size and scans them into segment starts, and one program per expert labels its
segment's blocks and scatters its slice's flat indices to their segment offset plus a rank
from an atomic add.  Integers only, a few hundred KB at most: the time is four dependent
launches, the per-program atomics, and a column scan reading the scratch experts apart.
Trials: DeepSeek-V3 (256 routed experts, top-8) on an 8,192-token prefill step at tensor
parallelism 8 (65,536 ids, 256 programs of 256 ids, BLOCK_SIZE_M 64 from vLLM's H200 fp8
table) and a Qwen3-30B-A3B (128 experts, top-8) decode step of 256 sequences at tensor
parallelism 2 (2,048 ids, 128 programs of 16, BLOCK_SIZE_M 32 from vLLM's H100 table).
The check's ids repeat no expert within one program's slice (the order the atomics hand out
ranks inside a program is the GPU's; see reference.py).  The floor is reading the ids once
and writing the three outputs once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_moe_align")

CONTEXTS = ("reduction", "multi-kernel", "small-grid")  # the decode trial: 128 programs
INT32 = 4


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The int32 ids read once; sorted_ids (numel + experts * (block_size - 1) slots),
    expert_ids (one per block_size of them) and the padded total written once, all int32
    (the dtype plays no part: integers only; the experts x experts count scratch, its zero
    fill and the column scan's re-reads are not counted)."""
    del dtype
    numel = d["tokens"] * d["topk"]
    padded = numel + d["experts"] * (d["block_size"] - 1)
    blocks = -(-padded // d["block_size"])
    return INT32 * (numel + padded + blocks + 1)


def flops(d: Mapping[str, int]) -> int:
    """None counted: integer counts, scans and index arithmetic only."""
    return 0


_make_inputs = _common.forward_make_inputs(
    "flaggems_moe_align", "tokens", "experts", "topk", "block_size"
)
_make_check_inputs = _common.forward_make_inputs(
    "flaggems_moe_align", "tokens", "experts", "topk", "block_size",
    function="make_check_inputs",
)  # fmt: skip
_reference = _common.forward_reference("flaggems_moe_align")
_baselines = _common.forward_baselines(
    "flaggems_moe_align",
    (
        "torch",
        "torch",
        "the same by torch ops without a host sync: a stable argsort, bincount, the rounded "
        "segment starts by cumsum, one scatter; each block's expert by searchsorted",
        "torch_moe_align",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_moe_align.launcher")


TRITON_KNOBS = (
    Knob("count_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program of stage 1 (one program per expert: the output fills and the "
         "atomic count of its next_power_of_2(cdiv(numel, experts)) ids); None: Triton's "
         "default 4, as FlagGems passes none"),
    Knob("scan_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program of stage 2 (one program per expert column: a tl.cumsum over "
         "the experts rows, experts * 4 bytes apart); None: Triton's default 4"),
    Knob("offsets_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps of stage 3 (the one program that rounds the experts totals up to the block "
         "size and scans them); None: Triton's default 4"),
    Knob("scatter_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program of stage 4 (one program per expert: a scalar store per block "
         "of its segment, then the atomic ranks and the scatter of its ids); None: Triton's "
         "default 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_moe_align",
    description=(
        "FlagGems' MoE block alignment (v5.0.2, moe_align_block_size_stage1 to _stage4): "
        "the routed ids counted per expert with atomics, scanned, rounded up to the GEMM's "
        "BLOCK_SIZE_M and scattered into expert-sorted, padded rows, four launches"
    ),
    dims=(
        Dim("tokens", "tokens routed in the step", "rows"),
        Dim("experts", "routed experts of the layer (global ids; one program each)"),
        Dim("topk", "experts per token"),
        Dim("block_size", "the fused MoE GEMM's BLOCK_SIZE_M (each segment's rounding)"),
    ),
    trials=(
        Trial(
            "deepseek_v3_tp8_prefill_8k",
            {"tokens": 8192, "experts": 256, "topk": 8, "block_size": 64},
            "an 8,192-token prefill step of fp8 DeepSeek-V3 (256 routed experts, top-8) at "
            "tensor parallelism 8, BLOCK_SIZE_M 64 as vLLM's H200 fp8 block-quant table "
            "(E=256, N=256) picks from 1024 tokens up: 65,536 ids, 256 programs of 256 ids "
            "each, 81,664 sorted slots in 1,276 blocks; 0.6 MB at the floor",
        ),
        Trial(
            "qwen3_30b_a3b_tp2_decode_256",
            {"tokens": 256, "experts": 128, "topk": 8, "block_size": 32},
            "a decode step of 256 sequences of Qwen3-30B-A3B (128 experts, top-8) at tensor "
            "parallelism 2, BLOCK_SIZE_M 32 as vLLM's H100 table (E=128, N=384) picks at "
            "256 tokens: 2,048 ids, 128 programs of 16 ids, 6,016 sorted slots in 188 "
            "blocks; 33 KB at the floor (launch-sized)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    make_check_inputs=_make_check_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # integer outputs, checked exactly (one misplaced id is ~1e-7 of sorted_ids' norm)
    tolerances={"bfloat16": 1e-15, "float16": 1e-15, "float32": 1e-15},
    entry_point="moe_align",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
