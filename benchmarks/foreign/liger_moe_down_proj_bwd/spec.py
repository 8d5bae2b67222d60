"""Liger-Kernel's fused MoE down-projection and SwiGLU backward (liger-kernel 0.8.5,
BSD-2-Clause), as kbopt sees it: a kernel nobody here wrote, imported from the installed
`liger_kernel` package (a pure-Triton wheel, in kbopt's dev extra); nothing of it is
copied here.

Why this one: Liger's `LigerExperts` replaces the stacked-weight experts of Mixtral,
Qwen3-MoE, Qwen3-VL-MoE, Qwen3-Next, Qwen3.5-MoE, DeepSeek-V2/V3, GLM-4.5V and Hunyuan-MoE
(transformers v5) when a fine-tuning run applies Liger's patches, and every MoE layer's
backward then starts with `_moe_bwd_down_proj_kernel`: Liger keeps no copy of the down
projection's output, so the backward recomputes the gradient of the SwiGLU output, g =
d_out[token] @ down[e] for every (token, expert) assignment, as a grouped GEMM over the
forward's 64-row routing tiles, and fuses into its epilogue all that the rest of the
backward needs from it: SwiGLU's backward from the saved pre-activations (d_pre_act, which
the input and gate/up weight gradients read next), the weighted activation s * y1, y1 =
silu(gate) * up (the down weight gradient's operand), and the routing weights' gradient, a
row sum of g * y1 that the row's inter / 128 column programs add together with atomics
into a zero-filled vector.  The liger MoE wrappers so far are a forward GEMM with a SwiGLU
epilogue whose rows are gathered from x (liger_moe_up_proj), a plain forward GEMM
(liger_moe_down_proj) and a weight gradient whose reduction is the expert's own rows
(liger_moe_up_proj_wgrad); here the d_out rows are gathered by token, the reduction is the
model width, and the epilogue reads the rows' [64, 128] gate and up tiles and writes
three outputs, one through atomics: at the 16k trial its writes (604 MB) outweigh any one of
its reads.  Trials: a Qwen3-30B-A3B fine-tuning step (128 experts of 768, top-8, width
2048) on a 16,384-token micro-batch (1,024 rows per expert on average: about 2,100 routing
tiles x 6 column programs of 32 steps), at the ridge, and a DeepSeek-V2-Lite one (64
routed experts of 1408, top-6, width 2048) on 4,096 tokens (384 rows: about 415 tiles x
11), where reading the 369 MB of expert weights is half the bytes.  The floor is the larger
of the tensor-core time for the products and the time to read d_out, the weights and the
pre-activations once and write the three outputs once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
# the 16k trial sits at the ridge, the 4k one on the memory side (the weights' read); the
# timed call is a zero fill and the GEMM
CONTEXTS = ("gemm", "grouped-gemm", "multi-kernel")
INT32 = 4


def flops(d: Mapping[str, int]) -> int:
    """2 per multiply-add: every assignment's d_out row (hidden) times its expert's down
    weight (hidden x inter).  The epilogue's element-wise work (a sigmoid and about a dozen
    fp32 operations per assignment and inter column) is not counted."""
    return 2 * d["tokens"] * d["k"] * d["hidden"] * d["inter"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """d_out read once (tokens x hidden), every expert's down weight read once (experts x
    hidden x inter: the trials route to all of them), the pre-activations read once and
    d_pre_act written once (2 * inter per assignment), weighted_act written once (inter per
    assignment), the routing weights read and their gradient written once (one per
    assignment), all in the dtype; the int32 gather and scatter indices (two per
    assignment) and expert starts read once.  The re-reads of the weights by every routing
    tile and of d_out by every column program, the per-tile routing metadata, d_weights'
    zero fill and the atomics' read-modify-writes are not counted."""
    e = ELEMENT_SIZE[dtype]
    assignments = d["tokens"] * d["k"]
    inter = d["inter"]
    values = d["tokens"] * d["hidden"] + d["experts"] * d["hidden"] * inter
    values += assignments * (2 * inter + 2 * inter + inter + 2)
    return e * values + INT32 * (2 * assignments + d["experts"] + 1)


_make_inputs = _common.forward_make_inputs(
    "liger_moe_down_proj_bwd", "tokens", "hidden", "inter", "experts", "k"
)
_make_check_inputs = _common.forward_make_inputs(
    "liger_moe_down_proj_bwd", "tokens", "hidden", "inter", "experts", "k",
    function="make_check_inputs",
)  # fmt: skip
_reference = _common.forward_reference("liger_moe_down_proj_bwd")
_baselines = _common.forward_baselines(
    "liger_moe_down_proj_bwd",
    (
        "torch",
        "torch",
        "HF's expert loop's backward in plain torch: each routed expert's d_out rows "
        "gathered and one matmul per expert, then SwiGLU's backward and the routing "
        "weights' gradient element-wise",
        "torch_moe_down_proj_bwd",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_moe_down_proj_bwd.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "assignment rows per routing tile (one expert each; the routing metadata is made "
         "for it); None: Liger's 64"),
    Knob("block_n", "int", (None, 32, 64, 128, 256), "tile_n",
         "inter columns per program (the grid's second dimension is cdiv(inter, this); "
         "each row's routing-weight gradient is the atomic sum of that many partials); "
         "None: Liger's pinned 128"),
    Knob("block_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "hidden depth per tl.dot step (the gathered d_out tile's width); None: Liger's "
         "pinned 64"),
    Knob("num_warps", "int", (None, 2, 4, 8, 16), "warps",
         "warps per program; None: Liger's pinned 8"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the hidden-size loop; None: Liger's pinned 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="liger_moe_down_proj_bwd",
    description=(
        "Liger-Kernel's fused MoE down-projection and SwiGLU backward (0.8.5, "
        "_moe_bwd_down_proj_kernel): per expert-sorted routing tile, its tokens' gathered "
        "d_out rows times the expert's down weight in tl.dot steps over the model width, "
        "then SwiGLU's backward from the saved pre-activations, the weighted activation "
        "and the routing weights' gradient (atomics) in the epilogue, bf16 out"
    ),
    dims=(
        Dim("tokens", "tokens in the micro-batch"),
        Dim("hidden", "model width (the GEMM's reduction)"),
        Dim("inter", "expert intermediate size (the GEMM's output columns; gate and up each)"),
        Dim("experts", "routed experts in the layer"),
        Dim("k", "experts per token (top-k)"),
    ),
    trials=(
        Trial(
            "qwen3_30b_a3b_train_16k_tokens",
            {"tokens": 16384, "hidden": 2048, "inter": 768, "experts": 128, "k": 8},
            "a fine-tuning step of Qwen3-30B-A3B (128 experts of 768, top-8, width 2048) "
            "on a 16,384-token micro-batch (four packed 4k sequences): 131,072 assignments, "
            "1,024 rows per expert on average, about 2,100 routing tiles x 6 column "
            "programs of 32 hidden steps; 412 GFLOP, 1.48 GB at the floor (the "
            "pre-activations read and d_pre_act written 403 MB each, the weights 403 MB)",
        ),
        Trial(
            "deepseek_v2_lite_train_4k_tokens",
            {"tokens": 4096, "hidden": 2048, "inter": 1408, "experts": 64, "k": 6},
            "a fine-tuning step of DeepSeek-V2-Lite's routed experts (64 of 1408, top-6, "
            "width 2048) on one 4k sequence: 24,576 assignments, 384 rows per expert on "
            "average, about 415 routing tiles x 11 column programs of 32 hidden steps; 142 "
            "GFLOP, 732 MB at the floor (the 369 MB of expert weights half of it)",
        ),
    ),
    backoff_dim="tokens",
    # a routing tile's rows are one expert's assignments (tokens * k / experts on average,
    # 1,024 and 384 in the trials), not the tokens: block_m spans those
    shape_metrics=lambda d: {"rows": -(-d["tokens"] * d["k"] // d["experts"])},
    make_inputs=_make_inputs,
    make_check_inputs=_make_check_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation, each output rounded once, but the routing weights' gradient is
    # the sum of cdiv(inter, block_n) partials added by atomics in the dtype (a rounding
    # per add); fp32 inputs go through TF32 tensor cores on the GPU
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 2e-3},
    entry_point="moe_down_proj_bwd",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
