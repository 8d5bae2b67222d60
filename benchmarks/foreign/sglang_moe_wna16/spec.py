"""SGLang's weight-only int4 MoE GEMM (SGLang v0.5.9, Apache-2.0; adapted there from vLLM),
as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_moe_wna16` and never committed.

Why this one: the MoE GEMM that SGLang runs for AWQ and GPTQ mixture-of-experts checkpoints
under its moe_wna16 method (the one `--quantization moe_wna16` picks, and AWQ's fallback for
layers Marlin cannot take), and a GEMM whose operand B must be decoded inside the K loop:
per BLOCK_SIZE_K step each program loads half as many bytes of its expert's packed weights
as there are weights, splits the nibbles by shift and mask, gathers a scale and a packed
zero point per element from the group tables, dequantizes in fp32 and casts to bf16 before
one tl.dot.  The nearest specs: `sglang_fused_moe`, the same grouped GEMM over expert-sorted
assignments with bf16 weights read straight into tl.dot (here the weight stream is a quarter
of its bytes and the decode is ALU work on the dot's critical path), and `vllm_awq_gemm`, a
dense AWQ GEMM with split-K and AWQ's interleaved nibble order (here every row block belongs
to one expert, its rows gathered by index, no split-K).  Both trials are Qwen3-30B-A3B-AWQ's
MoE layer (128 experts, top-8, 2048 -> 2 x 768, groups of 128) on one GPU: a 4096-token
prefill chunk, compute-bound, and a 32-sequence decode step that streams the packed weights
of the ~112 experts it hits.  Output: the [tokens * topk, 2 * inter] intermediate in the
activations' dtype.  The floor is the larger of reading the hidden states, the hit experts'
packed weights, scales and zero points once and writing the intermediate once, and the
routed matmul's flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_moe_wna16")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm")  # decode streams the packed weights, prefill is compute-bound


def experts_hit(d: Mapping[str, int]) -> float:
    """The expected number of experts that receive at least one token under the uniform
    routing `make_inputs` draws (each token picks topk distinct experts)."""
    e = d["experts"]
    return e * (1.0 - (1.0 - d["topk"] / e) ** d["tokens"])


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The hidden states read once; per expert hit its packed weights (half a byte each),
    its scales (the dtype) and packed zero points (half a byte each) read once; the
    intermediate written once; the sorted assignment ids (int32) read once."""
    es = ELEMENT_SIZE[dtype]
    n = 2 * d["inter"]
    groups = d["hidden"] // d["group"]
    assignments = d["tokens"] * d["topk"]
    per_expert = n * d["hidden"] // 2 + n * groups * es + n * groups // 2
    return int(
        d["tokens"] * d["hidden"] * es
        + experts_hit(d) * per_expert
        + assignments * n * es
        + 4 * assignments
    )


def flops(d: Mapping[str, int]) -> int:
    """One hidden x (2 * inter) product per routed (token, expert) pair (the dequantization
    not counted)."""
    return 2 * d["tokens"] * d["topk"] * 2 * d["inter"] * d["hidden"]


_make_inputs = _common.forward_make_inputs(
    "sglang_moe_wna16", "tokens", "hidden", "inter", "experts", "topk", "group"
)
_reference = _common.forward_reference("sglang_moe_wna16")
_baselines = _common.forward_baselines(
    "sglang_moe_wna16",
    (
        "torch",
        "torch",
        "the same by torch: per expert that received tokens, its int4 weights dequantized to "
        "the input dtype, then its tokens' rows times them by torch's matmul",
        "torch_moe_wna16",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_moe_wna16.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "expert-sorted assignments per program (each expert's run is padded to a multiple); "
         "None: SGLang's default 64 (16 at tokens <= experts)"),
    Knob("block_n", "int", (None, 32, 64, 128, 256), "tile_n",
         "output columns per program; None: SGLang's default 64 (32 at tokens <= experts)"),
    Knob("block_k", "int", (None, 32, 64, 128), "tile_k",
         "hidden-size depth per step (half as many packed bytes per column), at most the "
         "quantization group; None: SGLang's default 32 (64 at tokens <= experts)"),
    Knob("group_m", "int", (None, 1, 2, 4, 8, 16, 32), "grouping",
         "row blocks launched together before the column moves on; None: SGLang's default 8 "
         "(1 at tokens <= experts)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (SGLang's default config sets none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the hidden-size loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_moe_wna16",
    description=(
        "SGLang's weight-only int4 MoE GEMM (v0.5.9, moe_wna16, AWQ zero points): each routed "
        "(token, expert) pair's hidden state times the expert's gate and up weights, decoded "
        "from packed nibbles with per-group scales and zero points inside the K loop, tl.dot "
        "tiles over assignments sorted and padded by expert, bf16 in and out"
    ),
    dims=(
        Dim("tokens", "tokens in the batch (each routed to topk experts)", "rows"),
        Dim("hidden", "model width (the GEMM's depth)"),
        Dim("inter", "an expert's intermediate size (the GEMM's width is twice it)"),
        Dim("experts", "routed experts in the layer"),
        Dim("topk", "experts per token"),
        Dim("group", "quantization group along the hidden size (one scale and zero point)"),
    ),
    trials=(
        Trial(
            "prefill_qwen3_30b_a3b_awq",
            {"tokens": 4096, "hidden": 2048, "inter": 768, "experts": 128, "topk": 8, "group": 128},
            "a 4096-token prefill chunk through a Qwen3-30B-A3B-AWQ MoE layer (128 experts, "
            "top-8, 2048 -> 2 x 768, groups of 128): 32,768 assignments, about 256 per expert, "
            "206 GFLOP over 327 MB (SGLang's 64 x 64 x 32 tiles, groups of 8)",
        ),
        Trial(
            "decode_qwen3_30b_a3b_awq",
            {"tokens": 32, "hidden": 2048, "inter": 768, "experts": 128, "topk": 8, "group": 128},
            "a 32-sequence decode step through the same layer: 256 assignments hit about 112 "
            "experts, whose 1.6 MB of packed weights, scales and zeros each are streamed, "
            "184 MB for 1.6 GFLOP (SGLang's 16 x 32 x 64 tiles)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the dequantized weights rounded once to the compute dtype, fp32 accumulation over the
    # hidden size, one rounding to the output dtype (fp32 inputs: tf32 tl.dot on the GPU)
    tolerances={"bfloat16": 1.5e-2, "float16": 3e-3, "float32": 5e-3},
    entry_point="moe_wna16_gemm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
