"""SGLang's fused MoE router for Grok (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_moe_router` and never committed.

Why this one as the set's fused router: SGLang serves Grok-1 and Grok-2 with their MoE
routing done by its own Triton kernels (`fused_moe_router_shim`, Grok's custom routing
function), and from 512 tokens per batch on (or more than 8 experts) it takes the
tensor-core kernel: one program per 32 tokens walks the hidden size in 256-deep steps,
multiplying the activations by the fp32 router weight with `tl.dot` into 32 x 16 fp32
logits (8 experts, padded), then soft-caps them (30 * tanh(l / 30)) and picks each token's
top-2 experts and their softmax probabilities in registers.  A skinny GEMM (N = 8) fused
with its epilogue: the activations are read once, the 196 KB weight by every program from
the cache, and the grid is small (tokens / 32).  Both trials are Grok-1 (hidden 6144, 8
experts, top-2): a 512-token prefill chunk, the smallest batch SGLang routes through this
kernel (16 programs, 6.3 MB read; launch-sized), and a 16,384-token chunked-prefill batch
(512 programs, 201 MB read).  The floor is reading the activations and the weight once and
writing two fp32 weights and two int32 ids per token.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_moe_router")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "small-grid")  # a skinny GEMM (8 experts) fused with soft-capping and top-2
FP32 = 4


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The activations read once, the fp32 router weight once, an fp32 weight and an int32
    id per token and expert chosen written."""
    return (
        d["tokens"] * d["hidden"] * ELEMENT_SIZE[dtype]
        + d["experts"] * d["hidden"] * FP32
        + d["tokens"] * d["topk"] * 2 * FP32
    )


def flops(d: Mapping[str, int]) -> int:
    """The router GEMM's multiply-adds (the soft-capping and top-k are not counted)."""
    return 2 * d["tokens"] * d["hidden"] * d["experts"]


_make_inputs = _common.forward_make_inputs(
    "sglang_moe_router", "tokens", "hidden", "experts", "topk"
)
_reference = _common.forward_reference("sglang_moe_router")
_baselines = _common.forward_baselines(
    "sglang_moe_router",
    (
        "torch",
        "torch",
        "SGLang's torch router path: an fp32 GEMM, tanh soft-capping, softmax and torch.topk",
        "torch_moe_router",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_moe_router.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "tokens per program; None: SGLang's 32"),
    Knob("block_n", "int", (None, 16, 32), "tile_n",
         "expert columns of the logits tile (at least the experts: one N tile); None: "
         "SGLang's max(experts, 16)"),
    Knob("block_k", "int", (None, 32, 64, 128, 256), "tile_k",
         "hidden columns per K step (must divide the hidden size); None: SGLang's 256"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline stages of the K loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_moe_router",
    description=(
        "SGLang's fused MoE router for Grok (v0.5.9, fused_moe_router_tensorcore_kernel): "
        "one program per 32 tokens computes the router logits with tl.dot against the fp32 "
        "gate weight, soft-caps them and stores each token's top-2 experts and probabilities"
    ),
    dims=(
        Dim("tokens", "tokens of the batch (rows routed)", "batch"),
        Dim("hidden", "hidden size (the GEMM's K)"),
        Dim("experts", "routed experts (the GEMM's N)"),
        Dim("topk", "experts chosen per token (1 or 2)"),
    ),
    trials=(
        Trial(
            "grok1_prefill512",
            {"tokens": 512, "hidden": 6144, "experts": 8, "topk": 2},
            "Grok-1's router (hidden 6144, 8 experts, top-2) on a 512-token prefill chunk, "
            "the smallest batch SGLang routes through the tensor-core kernel: 16 programs, "
            "6.5 MB moved (bf16)",
        ),
        Trial(
            "grok1_prefill16k",
            {"tokens": 16384, "hidden": 6144, "experts": 8, "topk": 2},
            "the same on a 16,384-token chunked-prefill batch: 512 programs, 202 MB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # exact logits (grid-valued inputs): the ids must match, the fp32 probabilities differ
    # by the kernel's exp-based tanh and softmax only
    tolerances={"bfloat16": 1e-4, "float16": 1e-4, "float32": 1e-4},
    entry_point="moe_router",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
