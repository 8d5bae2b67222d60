"""FlashInfer's SM-bounded persistent GEMM (FlashInfer v0.7.4, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flashinfer_persistent_gemm` and never committed.

Why this one: `flashinfer.triton.gemm_persistent` is FlashInfer's GEMM for intra-device
overlap: the caller names how many SMs it may occupy (`num_sms`), so that a kernel running
beside it on another stream (decode attention next to a prefill's projections, or an
all-reduce) keeps the rest; with no budget it takes the whole device.  A 2-D GEMM over a
persistent grid of min(budget, tiles) programs, each walking output tiles `budget` apart
with a GROUP_SIZE_M swizzle, each tile a full K loop of tl.dot steps into fp32, the weight
read through the transposed view of a [out, hidden] parameter; its epilogue is
alpha (A @ B) + beta C, the C tile loaded even at beta 0.  FlashInfer launches it through an
autotuner holding a single configuration (128 x 128 x 64, GROUP_SIZE_M 8, 4 warps, 3 stages)
for every shape and dtype.  Nearest: vllm_bi_matmul (the same persistent tile walk, but its
grid always the device's SMs, a Hopper table tuned per (N, K) and M bucket, no C read) and
triton_matmul (one tile per program).  What differs here is the budget: the grid, and the
tile stride of the walk, are the caller's SM count, so at a small budget a program walks
many tiles and the tiles and warps that fill a full device are no longer the ones that fill
the budget.  Both trials are Llama-3.1-8B (hidden 4096, intermediate 14336) in bf16 with
FlashInfer's launch: the fused gate_up projection of a 4,096-token prefill batch with no
budget, the whole H100 (4096 x 28672 x 4096: 7,168 tiles over 132 programs, 54 or 55 each,
64 K steps a tile, compute-bound), and the o_proj of a 1,024-token batch bounded to 66 SMs,
half the H100, the other half left to a kernel overlapped with it (1024 x 4096 x 4096: 256
tiles, 3 or 4 a program).  The SM budget is a dimension of the problem, not a knob: a
version must not launch more programs than it.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flashinfer_persistent_gemm")

# a persistent GEMM; its grid is bounded by the caller's SM budget (half the device at the
# o_proj trial)
CONTEXTS = ("gemm", "small-grid")


def _elem(dtype: str) -> int:
    return 4 if dtype == "float32" else 2


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x (tokens x hidden) and the weight (out x hidden) read once, the output (tokens x out)
    written once, in the input dtype.  The epilogue's read of the C tile (beta 0: nothing
    it reads changes the result) and the tiles' re-reads of x and the weight are not
    counted."""
    m, n, k = d["tokens"], d["out"], d["hidden"]
    return _elem(dtype) * (m * k + n * k + m * n)


def flops(d: Mapping[str, int]) -> int:
    """A multiply and an add per token, output and hidden element; the epilogue's fma per
    output is not counted."""
    return 2 * d["tokens"] * d["out"] * d["hidden"]


_make_inputs = _common.forward_make_inputs(
    "flashinfer_persistent_gemm", "tokens", "out", "hidden", "sm_budget"
)
_reference = _common.forward_reference("flashinfer_persistent_gemm")
_baselines = _common.forward_baselines(
    "flashinfer_persistent_gemm",
    ("torch", "torch", "torch.nn.functional.linear (cuBLAS, free to take every SM: the "
     "budget is not honoured), as the layer runs without the SM-bounded GEMM",
     "torch_linear"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.flashinfer_persistent_gemm.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "rows (tokens) of a tile; None: FlashInfer's 128"),
    Knob("block_n", "int", (None, 32, 64, 128, 256), "tile_n",
         "columns (output features) of a tile; None: FlashInfer's 128"),
    Knob("block_k", "int", (None, 32, 64, 128), "tile_k",
         "depth of one tl.dot step; None: FlashInfer's 64"),
    Knob("group_m", "int", (None, 1, 2, 4, 8, 16), "grouping",
         "row tiles walked together before the column moves on; None: FlashInfer's 8"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program; None: FlashInfer's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the K loop; None: FlashInfer's 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flashinfer_persistent_gemm",
    description=(
        "FlashInfer's SM-bounded persistent GEMM (v0.7.4, gemm_kernel_persistent as "
        "gemm_persistent launches it): x @ weight.t() over min(SM budget, tiles) programs "
        "walking the tiles the budget apart, alpha/beta epilogue reading C, FlashInfer's "
        "one 128 x 128 x 64 configuration; here Llama-3.1-8B's gate_up on the whole H100 "
        "and o_proj on half of it"
    ),
    dims=(
        Dim("tokens", "rows of x and of the output (tokens in the batch)", "rows"),
        Dim("out", "output features (the weight's rows)"),
        Dim("hidden", "input features (the reduction length)"),
        Dim(
            "sm_budget",
            "SMs the caller lets the GEMM occupy (FlashInfer's num_sms, capped "
            "at the device's): the persistent grid is at most this, and the tile stride",
        ),
    ),
    trials=(
        # the large one: a prefill batch's widest projection with no budget given, the
        # whole H100 (132 SMs), as FlashInfer runs the GEMM when nothing overlaps it
        Trial(
            "llama31_8b_gate_up_prefill_4096",
            {"tokens": 4096, "out": 28672, "hidden": 4096, "sm_budget": 132},
            "Llama-3.1-8B's fused gate_up projection (2 x 14336) on a 4,096-token prefill "
            "batch, no budget (the H100's 132 SMs): FlashInfer's 128 x 128 x 64, 4 warps, 3 "
            "stages; 7,168 tiles over 132 persistent programs, 54 or 55 each, 64 K steps a "
            "tile",
        ),
        # the smaller one: an attention output projection bounded to half the device, the
        # other 66 SMs left to a kernel overlapped with it on another stream (the use
        # gemm_persistent's num_sms exists for)
        Trial(
            "llama31_8b_o_proj_1024_half_sms",
            {"tokens": 1024, "out": 4096, "hidden": 4096, "sm_budget": 66},
            "Llama-3.1-8B's o_proj (32 heads of 128 -> 4096) on a 1,024-token batch bounded "
            "to 66 of the H100's SMs: FlashInfer's 128 x 128 x 64, 4 warps, 3 stages; 256 "
            "tiles over 66 programs, 3 or 4 each, 64 K steps a tile",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # 4,096-deep products summed in fp32 (tf32 tl.dot for fp32 inputs) against fp64, the
    # epilogue's fma in the output dtype
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="matmul",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
