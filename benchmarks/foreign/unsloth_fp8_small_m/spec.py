"""Unsloth's fused small-M block fp8 linear (Unsloth 2026.10.9, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py unsloth_fp8_small_m` and never committed.

Why this one: Unsloth runs it for every linear layer of a block-fp8 checkpoint (Qwen3-FP8,
DeepSeek-V3-style e4m3 weights with one fp32 scale per 128 x 128 block) at an eager decode
step of 1 to 16 rows on a GPU of 100 SMs or more (`_fp8_block_small_m_first`: before its
bf16 GEMV and its block GEMM), and it is none of the wrapped families: the activations'
per-row, per-128-column fp8 quantization is fused into the GEMM's K loop (absmax, scale,
e4m3 cast of a [16, 128] tile at every step, no separate quantization launch, no quantized
activations written), and its split of K is reduced inside the kernel, deterministically:
each split stores an fp32 partial and the last program to arrive at a column tile (an
acq_rel atomic counter) sums them in split order.  Its nearest specs are
`sglang_fp8_block_gemm` (the same e4m3 tl.dot per 128-deep step with block scales, but on
activations quantized beforehand, with M tiles and no split) and `sglang_fp8_group_quant`
(the quantization alone); `vllm_awq_gemm` and `gemlite_gemv_revsplitk` split K too but
reduce it by torch or by atomics into the output.  Both trials are decode steps of 8
sequences (M = 8 of the 16-row tile live), at Unsloth's H100 launch: Qwen3-32B-FP8's gate
projection (5120 -> 25600: 64-column tiles, one split) and Qwen3-8B-FP8's down projection
(12288 -> 4096: 16-column tiles, two splits).  Output: [tokens, n] in the activations'
dtype.  The floor is the larger of reading the activations, the e4m3 weights and their
fp32 block scales once and writing the output once, and the product's flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "unsloth_fp8_small_m")

ELEMENT_SIZE = _common.ELEMENT_SIZE
# a decode-size GEMM streaming e4m3 weights, its activations quantized in the loop
CONTEXTS = ("gemm", "memory-bound")
BLOCK = 128


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The activations read once (in the spec's dtype), the e4m3 weights (one byte each) and
    their fp32 scales (one per 128 x 128 block) read once, the output written once.  The
    activations' re-reads by every column tile and split, the fp32 partials of a split K
    (written and read back once each), the arrival counters and their zero fill are not
    counted."""
    es = ELEMENT_SIZE[dtype]
    tokens, k, n = d["tokens"], d["k"], d["n"]
    scales = 4 * (-(-n // BLOCK)) * (k // BLOCK)
    return es * tokens * k + n * k + scales + es * tokens * n


def flops(d: Mapping[str, int]) -> int:
    """The product's multiply-adds (2 tokens k n) over the live rows; the 16-row tile's
    padding rows, the activations' quantization and the per-step scaling are not counted."""
    return 2 * d["tokens"] * d["k"] * d["n"]


_make_inputs = _common.forward_make_inputs("unsloth_fp8_small_m", "tokens", "k", "n")
_reference = _common.forward_reference("unsloth_fp8_small_m")
_baselines = _common.forward_baselines(
    "unsloth_fp8_small_m",
    (
        "torch",
        "torch",
        "the same product by torch: the activations quantized per row and 128-column block "
        "and dequantized, the weight dequantized, every call, then one matmul in the "
        "activations' dtype",
        "torch_dequant_linear",
    ),
)


_launch_info = _common.triton_launch_info("foreign.unsloth_fp8_small_m.launcher")


TRITON_KNOBS = (
    Knob("block_n", "int", (None, 16, 32, 64, 128), "tile_n",
         "output columns per program; None: Unsloth's widest of 128, 64, 32 with 2 column "
         "tiles per SM, else 16 (64 for the gate trial, 16 for the down trial)"),
    Knob("split_k", "int", (None, 1, 2, 4, 8, 16), "splits",
         "programs along K per column tile, their fp32 partials summed by the last to "
         "arrive; None: Unsloth's (doubled while the grid stays within 4 programs per SM and "
         "each split keeps 8+ K blocks: 1 for the gate trial, 2 for the down trial)"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program; None: Unsloth's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5, 6), "pipeline_stages",
         "software-pipeline depth of the K loop; None: Unsloth's by block_n (16: 5, 32: 4, "
         "64: 3, 128: 4)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="unsloth_fp8_small_m",
    description=(
        "Unsloth's fused small-M block fp8 linear (2026.10.9, its eager decode path for "
        "1 to 16 rows): activations quantized to e4m3 per row and 128-column block inside "
        "the K loop, e4m3 tl.dot against 128 x 128 block-scaled e4m3 weights into fp32, K "
        "split across programs and summed in order by the last to arrive; Unsloth's H100 "
        "launch"
    ),
    dims=(
        Dim("tokens", "activation rows (sequences at the decode step, 1 to 16)", "rows"),
        Dim(
            "k",
            "input features (the row each output's dot product reduces, split across the "
            "grid; a multiple of 128)",
            "row_len",
        ),
        Dim("n", "output features (rows of the weight)"),
    ),
    # Decode steps of 8 sequences on one H100 (132 SMs), as Unsloth's for_inference runs
    # them on a block-fp8 checkpoint: Qwen3-32B-FP8's gate projection first (the widest
    # weight of its layers, 131 MB of e4m3, 400 column tiles of 40 K steps each), then
    # Qwen3-8B-FP8's down projection (the deepest K of its layers, 50 MB, few enough
    # column tiles that Unsloth splits K in two and reduces it in the kernel).
    trials=(
        Trial(
            "qwen3_32b_fp8_decode8_gate",
            {"tokens": 8, "k": 5120, "n": 25600},
            "an 8-sequence decode step through Qwen3-32B-FP8's gate projection (5120 -> "
            "25600): Unsloth's 16 x 64 tiles, one split, 4 warps, 3 stages, 400 programs of "
            "40 128-deep steps, 2.1 GFLOP, 131 MB moved (the e4m3 weight nearly all of it)",
        ),
        Trial(
            "qwen3_8b_fp8_decode8_down",
            {"tokens": 8, "k": 12288, "n": 4096},
            "an 8-sequence decode step through Qwen3-8B-FP8's down projection (12288 -> "
            "4096): Unsloth's 16 x 16 tiles, K split in two (48 steps each, the last of a "
            "tile's two programs summing the fp32 partials), 4 warps, 5 stages, 512 "
            "programs, 0.8 GFLOP, 50 MB moved",
        ),
    ),
    backoff_dim="n",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the activations' e4m3 rounding matches the reference's; exact e4m3 products summed
    # in fp32 per step, scaled in fp32, splits summed in fp32, one rounding to the output
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 2e-3},
    entry_point="fp8_small_m_linear",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
    dtype="bfloat16",
    matmul_dtype="float8_e4m3fn",
)
