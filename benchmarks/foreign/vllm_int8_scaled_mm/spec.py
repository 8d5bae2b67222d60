"""vLLM's Triton W8A8 scaled GEMM (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
vllm_int8_scaled_mm` and never committed.

Why this one: TritonInt8ScaledMMLinearKernel runs it in every linear layer of a
compressed-tensors W8A8 int8 model when vLLM is told `--linear-backend triton` (the default
on ROCm and XPU; on CUDA also for a weight whose sides are no multiple of 16): activations
quantized per token to int8 by vLLM's dynamic `scaled_int8_quant`, times int8 weights
quantized per output channel and kept as the transposed [K, N] view of the checkpoint's rows
(each B tile read down its K-contiguous columns), an int8 tl.dot into an int32 accumulator
over the whole of K in one program (no split, no grouping of the tiles), the per-token and
per-channel fp32 scales applied once after the loop.  Its nearest spec is
`sglang_int8_block_gemm` (int8 operands on the same tensor-core path); it differs in the
scaling (one row and one column scale applied once at the end, so the integer sum runs
exactly over all of K instead of being converted and scaled every 128-deep step), in the
weight's layout (K-major columns), in the tile table (by the rows: 64 x 64 x 256 for a decode
batch, 128 x 128 x 128 for a prefill chunk) and in the plain row-major tile order.  Both
trials are RedHatAI's Meta-Llama-3.1-8B-Instruct-quantized.w8a8 (symmetric, channelwise
weights, dynamic per-token activations): an 8192-token prefill chunk through the fused gate
and up projection (4096 -> 28672, compute-bound) and a 32-sequence decode step through the
down projection (14336 -> 4096, 64 programs each walking 56 K steps: a weight stream on half
the SMs).  Output: [tokens, n] in the spec's dtype; a and b are int8 whatever it is.  The
floor is the larger of reading both int8 operands and their scales once and writing C once,
and the GEMM's operations against the 8-bit matmul rate (`matmul_dtype` float8_e4m3fn: kbopt
has no int8 ceiling; Hopper's dense int8 and fp8 tensor-core rates are the same).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_int8_scaled_mm")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm",)  # the decode trial streams the weight, the prefill one is compute-bound


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The int8 activations and weights (one byte each) read once, their fp32 scales (one
    per token, one per output channel) read once, C written once in the spec's dtype.  The
    re-reads of A by every column tile and of B by every row tile are not counted."""
    m, k, n = d["tokens"], d["k"], d["n"]
    return m * k + k * n + 4 * (m + n) + ELEMENT_SIZE[dtype] * m * n


def flops(d: Mapping[str, int]) -> int:
    """The product's multiply-adds (2 tokens k n, integer); the epilogue's two scale
    multiplies per output are not counted."""
    return 2 * d["tokens"] * d["k"] * d["n"]


_make_inputs = _common.forward_make_inputs("vllm_int8_scaled_mm", "tokens", "k", "n")
_reference = _common.forward_reference("vllm_int8_scaled_mm")
_baselines = _common.forward_baselines(
    "vllm_int8_scaled_mm",
    (
        "torch",
        "torch",
        "torch's int8 GEMM (torch._int_mm, s8 x s8 -> s32) on the same operands, then the "
        "per-token and per-channel scales in fp32 and one cast",
        "torch_int8_scaled_mm",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_int8_scaled_mm.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "tokens (rows of C) per program; None: vLLM's 64 up to 128 rows, else 128"),
    Knob("block_n", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "output channels per program; None: vLLM's 64, or 128 from 65 rows (and up to 32 "
         "rows where N >= 8192)"),
    Knob("block_k", "int", (None, 32, 64, 128, 256), "tile_k",
         "depth of one int8 tl.dot step; None: vLLM's 256 up to 64 rows, else 128"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the K loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_int8_scaled_mm",
    description=(
        "vLLM's Triton W8A8 scaled GEMM (v0.34.0, TritonInt8ScaledMMLinearKernel's "
        "triton_scaled_mm): per-token int8 activations times per-channel int8 weights (the "
        "[K, N] view of the checkpoint's rows), an int8 tl.dot into int32 over the whole of "
        "K, both fp32 scales applied once after the loop, tiles by the rows (64 x 64 x 256 "
        "up to 64, 64 x 128 x 128 up to 128, 128 x 128 x 128 above)"
    ),
    dims=(
        Dim("tokens", "activation rows (tokens in the step)", "rows"),
        Dim("k", "input features (the products' depth)"),
        Dim("n", "output features (the weight's rows)"),
    ),
    # A compute-bound prefill GEMM first (14,336 programs of 128 x 128 tiles), then a decode
    # step whose 64 programs stream the down projection's int8 weight; both RedHatAI's
    # Meta-Llama-3.1-8B-Instruct-quantized.w8a8 on one H100.
    trials=(
        Trial(
            "llama31_8b_w8a8_prefill8192_gate_up",
            {"tokens": 8192, "k": 4096, "n": 28672},
            "an 8192-token prefill chunk (vLLM's default token budget on an 80 GB GPU) "
            "through Meta-Llama-3.1-8B-Instruct-quantized.w8a8's fused gate and up projection "
            "(4096 -> 2 x 14336): vLLM's 128 x 128 x 128 tiles, 64 x 224 = 14,336 programs of "
            "32 K steps, 1.92 TOP, 621 MB moved (bf16; the output most of it)",
        ),
        Trial(
            "llama31_8b_w8a8_decode32_down",
            {"tokens": 32, "k": 14336, "n": 4096},
            "the same model's decode step of 32 sequences through the down projection "
            "(14336 -> 4096): vLLM's 64 x 64 x 256 tiles (32 rows live), 1 x 64 = 64 programs "
            "of 56 K steps on 132 SMs, 3.8 GOP, 59 MB moved (the int8 weight nearly all of it)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # an exact int32 sum over K, two fp32 scale multiplies, one rounding to C's dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="int8_scaled_mm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
    dtype="bfloat16",
    matmul_dtype="float8_e4m3fn",
)
