"""SGLang's fused MoE GEMM (SGLang v0.5.9, Apache-2.0; adapted there from vLLM), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_fused_moe` and never committed.

The first GEMM of a mixture-of-experts layer, unquantized: every token's hidden state times
the gate and up projections of each of its top-k experts, as one launch over the
assignments sorted by expert (a grouped GEMM whose rows are gathered through an index).
Output: the [tokens * topk, 2 * inter] intermediate (the SiLU-and-mul and the second GEMM
are other launches).  The floor is the larger of reading the hidden states once, the
weights of every expert that receives a token once and writing the intermediate once, and
the routed matmul's flops.  At a decode step it is a weight-streaming kernel (nearly every
expert is hit by a few tokens each); at a prefill it is a compute-bound GEMM.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_fused_moe")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm")  # decode streams the experts' weights, prefill is compute-bound


def experts_hit(d: Mapping[str, int]) -> float:
    """The expected number of experts that receive at least one token under the uniform
    routing `make_inputs` draws (each token picks topk distinct experts)."""
    e = d["experts"]
    return e * (1.0 - (1.0 - d["topk"] / e) ** d["tokens"])


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The hidden states read once, the weights of the experts hit read once, the
    intermediate written once, the sorted assignment ids (int32) read once."""
    es = ELEMENT_SIZE[dtype]
    n = 2 * d["inter"]
    assignments = d["tokens"] * d["topk"]
    weights = experts_hit(d) * n * d["hidden"] * es
    return int(d["tokens"] * d["hidden"] * es + weights + assignments * n * es + 4 * assignments)


def flops(d: Mapping[str, int]) -> int:
    """One hidden x (2 * inter) product per routed (token, expert) pair."""
    return 2 * d["tokens"] * d["topk"] * 2 * d["inter"] * d["hidden"]


_make_inputs = _common.forward_make_inputs(
    "sglang_fused_moe", "tokens", "hidden", "inter", "experts", "topk"
)
_reference = _common.forward_reference("sglang_fused_moe")
_baselines = _common.forward_baselines(
    "sglang_fused_moe",
    (
        "torch",
        "torch",
        "the same products by torch's matmul, one per expert that received tokens",
        "torch_moe_gemm",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_fused_moe.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "expert-sorted assignments per program (each expert's run is padded to a multiple); "
         "None: SGLang's default 64 (16 at tokens <= experts)"),
    Knob("block_n", "int", (None, 32, 64, 128, 256), "tile_n",
         "output columns per program; None: SGLang's default 64 (32 at tokens <= experts)"),
    Knob("block_k", "int", (None, 16, 32, 64, 128, 256), "tile_k",
         "hidden-size depth per tl.dot step; None: SGLang's default 32 (64 at tokens <= "
         "experts)"),
    Knob("group_m", "int", (None, 1, 2, 4, 8, 16, 32, 64), "grouping",
         "row blocks launched together before the column moves on; None: SGLang's default 8 "
         "(1 at tokens <= experts)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (SGLang's default config sets none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the hidden-size loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_fused_moe",
    description=(
        "SGLang's fused MoE GEMM (v0.5.9), unquantized: each routed (token, expert) pair's "
        "hidden state times the expert's gate and up weights, tl.dot tiles over assignments "
        "sorted and padded by expert, rows gathered by index, bf16 in and out"
    ),
    dims=(
        Dim("tokens", "tokens in the batch (each routed to topk experts)", "rows"),
        Dim("hidden", "model width (the GEMM's depth)"),
        Dim("inter", "an expert's intermediate size (the GEMM's width is twice it)"),
        Dim("experts", "routed experts in the layer"),
        Dim("topk", "experts per token"),
    ),
    trials=(
        Trial(
            "decode_deepseek_v2_lite",
            {"tokens": 64, "hidden": 2048, "inter": 1408, "experts": 64, "topk": 6},
            "a 64-sequence decode step through a DeepSeek-V2-Lite MoE layer (64 routed experts, "
            "top-6, 2048 -> 2 x 1408): 384 assignments stream nearly every expert's 11.5 MB of "
            "weights, 739 MB moved for 4.4 GFLOP (SGLang's 16 x 32 x 64 tiles)",
        ),
        Trial(
            "prefill_deepseek_v2_lite",
            {"tokens": 4096, "hidden": 2048, "inter": 1408, "experts": 64, "topk": 6},
            "a 4096-token prefill chunk through the same layer: 24,576 assignments, about 384 "
            "per expert, 283 GFLOP over 893 MB (SGLang's 64 x 64 x 32 tiles, groups of 8)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation over the hidden size, one rounding to the output dtype (fp32 inputs:
    # SGLang's compute type is fp16 then, and tl.dot is tf32 on the GPU)
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 5e-3},
    entry_point="fused_moe_gemm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
