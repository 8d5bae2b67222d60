"""vLLM's Triton W4A16 GEMM (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel nobody here
wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
vllm_w4a16_gemm` and never committed.

Why this one: TritonW4A16LinearKernel runs it in every linear layer of a compressed-tensors
int4 weight-only (W4A16) model when vLLM is told `--linear-backend triton` (on ROCm it is the
default): bf16 activations times int4 weights packed eight consecutive columns to an int32
(GPTQ's sequential order), unpacked in registers (three tl.interleave, shifts and a mask),
the constant zero point 8 subtracted (uint4b8) and the group's scale applied in the
activations' dtype, then a tl.dot accumulating in fp32 over the whole of K in one program
(no split), so the tile sizes set both the grid and the weight reuse.  Its CUDA table picks
the tiles by the rows alone (32 x 64, 64 x 64, 128 x 128, BLOCK_K 32) and leaves warps and
stages at Triton's defaults.  Both trials are RedHatAI's Llama-3.1-8B-Instruct quantized.w4a16
(symmetric, group 128): a 2048-token prefill chunk through the fused gate and up projection
(4096 -> 28672, a compute-bound GEMM) and a 32-sequence decode step through the down
projection (14336 -> 4096, 64 programs each walking 448 K steps: a weight stream on a
fraction of the SMs).  Output: [tokens, n] in the activations' dtype.  The floor is the
larger of reading the activations, packed weights, packed zero points and scales once and
writing the output once, and the GEMM's flops.  The kernel's packed-zeros path (HAS_ZP,
asymmetric uint4 checkpoints) is launchable from the launcher but not a trial here.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_w4a16_gemm")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm",)  # a GEMM over int4 weights dequantized in registers, no split of K


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The activations read once, the int4 weights (n / 8 int32 per row) and the scales read
    once (symmetric uint4b8: no zero points to read), the output written once.  The re-reads of the activations by every column tile and of the weights by
    every row tile are not counted."""
    es = ELEMENT_SIZE[dtype]
    groups = d["k"] // d["group"]
    return (
        es * d["tokens"] * d["k"]
        + d["k"] * d["n"] // 2
        + es * groups * d["n"]
        + es * d["tokens"] * d["n"]
    )


def flops(d: Mapping[str, int]) -> int:
    """The product's multiply-adds (2 tokens k n); the dequantization's subtract and multiply
    per weight per row tile are not counted."""
    return 2 * d["tokens"] * d["k"] * d["n"]


_make_inputs = _common.forward_make_inputs("vllm_w4a16_gemm", "tokens", "k", "n", "group")
_reference = _common.forward_reference("vllm_w4a16_gemm")
_baselines = _common.forward_baselines(
    "vllm_w4a16_gemm",
    (
        "torch",
        "torch",
        "the same product by torch: the weight unpacked and dequantized in the input dtype, "
        "then one dense matmul",
        "torch_w4a16_gemm",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_w4a16_gemm.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "activation rows per program; None: vLLM's 32 up to 32 rows, 64 up to 64, else 128"),
    Knob("block_n", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "output columns per program (a multiple of the 8 per packed word); None: vLLM's 64 "
         "up to 64 rows, else 128"),
    Knob("block_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "depth of one tl.dot step, dividing the quantization group (one row of scales a "
         "step); None: vLLM's 32"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the K loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_w4a16_gemm",
    description=(
        "vLLM's Triton W4A16 GEMM (v0.34.0, TritonW4A16LinearKernel): int4 weights packed "
        "eight columns to an int32 in GPTQ order, unpacked and dequantized per tile with the "
        "zero point 8 (or packed zeros) and their group's scale, a tl.dot accumulating in "
        "fp32 over the whole of K, tiles by the rows (32 x 64, 64 x 64, 128 x 128; BLOCK_K 32)"
    ),
    dims=(
        Dim("tokens", "activation rows (tokens in the step)", "rows"),
        Dim("k", "input features (the products' depth)"),
        Dim("n", "output features"),
        Dim("group", "rows of the weight per scale (128)"),
    ),
    # A compute-bound prefill GEMM first (3,584 programs of 128 x 128 tiles), then a decode
    # step whose 64 programs stream the down projection's packed weight; both RedHatAI's
    # Llama-3.1-8B-Instruct-quantized.w4a16 (symmetric uint4b8, group 128) on one H100.
    trials=(
        Trial(
            "llama31_8b_w4a16_prefill2048_gate_up",
            {"tokens": 2048, "k": 4096, "n": 28672, "group": 128},
            "a 2048-token prefill chunk through Llama-3.1-8B-Instruct-quantized.w4a16's fused "
            "gate and up projection (4096 -> 2 x 14336): vLLM's 128 x 128 x 32 tiles, 16 x 224 "
            "= 3,584 programs of 128 K steps, 481 GFLOP, 195 MB moved (bf16; the output most "
            "of it)",
        ),
        Trial(
            "llama31_8b_w4a16_decode32_down",
            {"tokens": 32, "k": 14336, "n": 4096, "group": 128},
            "the same model's decode step of 32 sequences through the down projection "
            "(14336 -> 4096): vLLM's 32 x 64 x 32 tiles, 1 x 64 = 64 programs of 448 K steps "
            "on 132 SMs, 3.8 GFLOP, 31 MB moved (the packed weights nearly all of it)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the weights dequantized in the activations' dtype (one rounding of (q - z) * s), fp32
    # accumulation; fp32 goes through tf32 on the GPU
    tolerances={"bfloat16": 2e-2, "float16": 1e-2, "float32": 5e-3},
    entry_point="w4a16_gemm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
    dtype="bfloat16",
)
