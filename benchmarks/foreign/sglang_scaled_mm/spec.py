"""SGLang's per-token x per-channel scaled fp8 GEMM (SGLang v0.5.9, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_fp8_mla_scaled_mm` and never committed.

Why this one: the linear layers of a channel-wise fp8 checkpoint (weights in e4m3 with one
fp32 scale per output channel, activations quantized dynamically per token, as
RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic) go through SGLang's `apply_fp8_linear`,
which runs this Triton GEMM when `USE_TRITON_W8A8_FP8_KERNEL` is set or the weight
is not CUTLASS-compatible (a dimension not a multiple of 16).  Unlike the block-fp8 GEMM
(`sglang_fp8_block_gemm`: one scale pair per 128-deep step inside the K loop, grouped tile
order, a 128-deep step forced by the format), its scales are applied once after the K loop
(an outer product of the tile's token and channel scales), its tiles, the K step included,
come from a heuristic on M, its tiles run in plain row-major order, and every K step is
masked.  The trials are Llama 3.1 8B's: a 32-sequence decode step through the fused
gate/up projection (28,672 x 4096: 117 MB of e4m3 weights streamed) and a 4096-token
prefill chunk through the down projection (4096 x 14,336).  The floor is the larger of
reading both e4m3 operands and their scales once and writing C once, and the matmul's flops
at the fp8 matmul rate.  The spec's dtype is C's dtype: A and B are e4m3 whatever it is.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_fp8_mla_scaled_mm")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm",)  # the decode trial streams the weights, the prefill one is compute-bound


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """A and B (one byte each) read once, their fp32 scales read once, C written once."""
    scales = 4 * (d["m"] + d["n"])
    return d["m"] * d["k"] + d["n"] * d["k"] + scales + ELEMENT_SIZE[dtype] * d["m"] * d["n"]


def flops(d: Mapping[str, int]) -> int:
    return 2 * d["m"] * d["n"] * d["k"]


_make_inputs = _common.forward_make_inputs("sglang_scaled_mm", "m", "n", "k")
_reference = _common.forward_reference("sglang_scaled_mm")
_baselines = _common.forward_baselines(
    "sglang_scaled_mm",
    (
        "torch",
        "torch",
        "both operands dequantized to the output dtype, then torch's matmul",
        "torch_dequant_matmul",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_scaled_mm.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "rows of C (tokens) per program; None: SGLang's heuristic (64 up to 128 tokens, "
         "then 128)"),
    Knob("block_n", "int", (None, 32, 64, 128, 256), "tile_n",
         "columns of C (output channels) per program; None: SGLang's heuristic"),
    Knob("block_k", "int", (None, 32, 64, 128, 256), "tile_k",
         "depth of each K step's tl.dot; None: SGLang's heuristic (256 up to 64 tokens, "
         "then 128)"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the K loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_scaled_mm",
    description=(
        "SGLang's per-token x per-channel scaled fp8 GEMM (v0.5.9, scaled_mm_kernel): e4m3 "
        "activations times the transposed e4m3 weight, fp32 accumulation over masked K "
        "steps, the token and channel scales applied once after the loop, bf16 out"
    ),
    dims=(
        Dim("m", "tokens (rows of A and C)", "rows"),
        Dim("n", "output features (columns of C)"),
        Dim("k", "input features (the depth)"),
    ),
    trials=(
        Trial(
            "decode_gate_up_llama31_8b_fp8",
            {"m": 32, "n": 28672, "k": 4096},
            "a 32-sequence decode step through Llama 3.1 8B FP8-dynamic's fused gate/up "
            "projection: 117 MB of e4m3 weights streamed by 224 programs (SGLang's 64 x 128 "
            "x 256 tiles), 7.5 GFLOP",
        ),
        Trial(
            "prefill_down_proj_llama31_8b_fp8",
            {"m": 4096, "n": 4096, "k": 14336},
            "a 4096-token prefill chunk through Llama 3.1 8B FP8-dynamic's down projection: "
            "481 GFLOP in 1024 programs of 128 x 128 x 128, 151 MB moved",
        ),
    ),
    backoff_dim="m",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # exact e4m3 products summed in fp32, scaled in fp32, one rounding to C's dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 2e-3},
    entry_point="triton_scaled_mm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
    matmul_dtype="float8_e4m3fn",
)
