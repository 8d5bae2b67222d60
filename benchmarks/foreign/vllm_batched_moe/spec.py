"""vLLM's expert-batched MoE GEMM (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_batched_moe` and never committed.

Why this one as the set's batched-format MoE GEMM: under expert parallelism with DeepEP's
low-latency all-to-all (the decode path of wide-EP serving), the dispatch leaves every
local expert a fixed slot of max_tokens rows, [experts, max_tokens, hidden], holding the
tokens routed to it in its first expert_num_tokens[e] rows; vLLM's `BatchedTritonExperts`
(the unquantized and fp8 Triton experts for that format) runs both MoE GEMMs over it with
this kernel.  One program per expert and (rows, columns) tile of its slot; tiles past the
expert's count exit at once, the others loop over the hidden size in masked tl.dot steps.
vLLM sizes the tiles from max_tokens, the slot's capacity, not from the tokens actually
received, so most programs of a launch exit early and the busy ones have few valid rows.
Output: [experts, max_tokens, 2 * inter], the gate and up projections of the first GEMM
(the activation and the second GEMM are other launches).  Both trials are Qwen3-30B-A3B's
MoE layer (128 experts, top-8, hidden 2048, expert width 768) at EP 8 (16 local experts),
DeepEP low-latency over 8 ranks: a small decode batch of 32 tokens a rank (256-row slots,
16 tokens an expert on average) and a full one of 256 a rank (2048-row slots, 128 an
expert).  The floor is the larger of streaming the local experts' weights once (100 MB,
the decode trial's bound) plus the valid rows in and out, and the valid rows' flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_batched_moe")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm")  # weight-streaming at decode sizes, early-exit tiles


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Every local expert's weights read once (all are hit at these averages), the valid
    rows of the activations read once and of the output written once, the counts (int32)
    read once; the slots' rows past the counts are not touched."""
    es = ELEMENT_SIZE[dtype]
    n = 2 * d["inter"]
    rows = d["experts"] * d["avg_tokens"]
    weights = d["experts"] * n * d["hidden"] * es
    return int(weights + rows * d["hidden"] * es + rows * n * es + 4 * d["experts"])


def flops(d: Mapping[str, int]) -> int:
    """One hidden x (2 * inter) product per valid row of every expert."""
    return 2 * d["experts"] * d["avg_tokens"] * 2 * d["inter"] * d["hidden"]


_make_inputs = _common.forward_make_inputs(
    "vllm_batched_moe", "experts", "max_tokens", "hidden", "inter", "avg_tokens"
)
_reference = _common.forward_reference("vllm_batched_moe")
_baselines = _common.forward_baselines(
    "vllm_batched_moe",
    (
        "torch",
        "torch",
        "the same products by torch's matmul, one per expert over its valid rows (vLLM's "
        "NaiveBatchedExperts loop)",
        "torch_batched_gemm",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_batched_moe.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "slot rows per program (tiles past an expert's count exit at once); None: vLLM's "
         "default for max_tokens rows (64 at 256, 128 at 2048)"),
    Knob("block_n", "int", (None, 32, 64, 128, 256), "tile_n",
         "output columns per program; None: vLLM's 128 (64 at max_tokens <= 64)"),
    Knob("block_k", "int", (None, 16, 32, 64, 128, 256), "tile_k",
         "hidden-size depth per tl.dot step; None: vLLM's 64 (128 at max_tokens <= 64)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: vLLM's 8 (4 at max_tokens <= 128)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the hidden-size loop; None: vLLM's 3 (4 at "
         "max_tokens <= 32)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_batched_moe",
    description=(
        "vLLM's expert-batched MoE GEMM (v0.34.0, batched_triton_kernel), unquantized: "
        "each local expert's slot of max_tokens rows, its first expert_num_tokens[e] valid, "
        "times the expert's gate and up weights, tl.dot tiles per expert, tiles past the "
        "count exiting at once, bf16 in and out"
    ),
    dims=(
        Dim("experts", "local experts on this rank (one slot each)", "batch"),
        Dim("max_tokens", "rows of each expert's slot (the dispatch's capacity)"),
        Dim("hidden", "model width (the GEMM's depth)"),
        Dim("inter", "an expert's intermediate size (the GEMM's width is twice it)"),
        Dim("avg_tokens", "tokens an expert receives on average (counts drawn around it)"),
    ),
    trials=(
        Trial(
            "ll_256_qwen3_30b_a3b_ep8",
            {"experts": 16, "max_tokens": 256, "hidden": 2048, "inter": 768, "avg_tokens": 16},
            "a decode step of Qwen3-30B-A3B (128 experts, top-8, 2048 -> 2 x 768) at EP 8 "
            "over DeepEP low-latency, 32 tokens a rank: 16 local slots of 256 rows, about "
            "16 valid each; 1.6 GFLOP over the 100 MB of local weights (vLLM's 64 x 128 x "
            "64 tiles, 8 warps: 768 programs, 1 of 4 row tiles busy)",
        ),
        Trial(
            "ll_2048_qwen3_30b_a3b_ep8",
            {"experts": 16, "max_tokens": 2048, "hidden": 2048, "inter": 768, "avg_tokens": 128},
            "the same layer with 256 tokens a rank (DeepEP low-latency's largest dispatch "
            "here): 2048-row slots, about 128 valid each; 12.9 GFLOP over 115 MB (vLLM's "
            "128 x 128 x 64 tiles, 8 warps: 3072 programs, 1 or 2 of 16 row tiles busy)",
        ),
    ),
    backoff_dim="experts",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation over the hidden size, one rounding to the output dtype (fp32 inputs
    # go through tl.dot's tf32 on the GPU)
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 5e-3},
    entry_point="batched_moe_gemm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
