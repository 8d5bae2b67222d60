"""Liger-Kernel's fused MoE input gradient through the gate/up projection (liger-kernel
0.8.5, BSD-2-Clause), as kbopt sees it: a kernel nobody here wrote, imported from the
installed `liger_kernel` package (a pure-Triton wheel, in kbopt's dev extra); nothing of
it is copied here.

Why this one: Liger's `LigerExperts` replaces the stacked-weight experts of Mixtral,
Qwen3-MoE, Qwen3-VL-MoE, Qwen3-Next, Qwen3.5-MoE, DeepSeek-V2/V3, GLM-4.5V and Hunyuan-MoE
(transformers v5) when a fine-tuning run applies Liger's patches, and every MoE layer's
backward passes the gradient on to the layer below through `_moe_bwd_dX_expanded_kernel`:
for every (token, expert) assignment, SwiGLU's gradient d_pre_act (gate and up halves)
times the expert's stacked gate/up weight, as a grouped GEMM over the forward's 64-row
routing tiles whose reduction is the intermediate size and whose output is the model
width, with two tl.dot and two fp32 accumulators per step (gate and up: Liger keeps them
apart because one shared accumulator miscompiled on sm_103) and a plain store, no
epilogue.  The liger MoE wrappers so far are a forward GEMM gathering x rows by token with
a SwiGLU epilogue (liger_moe_up_proj), a plain forward GEMM over the inter reduction
(liger_moe_down_proj), a backward GEMM gathering d_out rows with a three-output epilogue
and atomics (liger_moe_down_proj_bwd) and a weight gradient reducing over an expert's own
rows (liger_moe_up_proj_wgrad); here the rows are contiguous, the weight is read
untransposed (its 2 * inter rows are the reduction, hidden-contiguous) as two separate
row slices a step, and the reduction is twice the intermediate size.  Trials: a
Qwen3-30B-A3B fine-tuning step (128 experts of 768, top-8, width 2048) on a 16,384-token
micro-batch (1,024 rows per expert on average: about 2,100 routing tiles x 16 column
programs of 12 steps), on the compute side, and a DeepSeek-V2-Lite one (64 routed experts
of 1408, top-6, width 2048) on 4,096 tokens (384 rows: about 415 tiles x 16 of 22 steps),
at the ridge, where reading the 738 MB of expert weights is three quarters of the
bytes.  The floor is the larger of the tensor-core time for the products and the time to
read d_pre_act and the weights once and write dx_expanded once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
# the 16k trial is on the compute side (about 470 flops a byte at the floor), the 4k one
# at the ridge (about 290, the weights' read three quarters of its bytes); one GEMM launch
CONTEXTS = ("gemm", "grouped-gemm")
INT32 = 4


def flops(d: Mapping[str, int]) -> int:
    """2 per multiply-add: every assignment's d_pre_act row (2 * inter: the gate and up
    halves) times its expert's stacked gate/up weight (2 * inter x hidden).  The add of the
    two accumulators (hidden per assignment) is not counted."""
    return 2 * d["tokens"] * d["k"] * 2 * d["inter"] * d["hidden"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """d_pre_act read once (2 * inter per assignment), every expert's gate/up weight read
    once (experts x 2 * inter x hidden: the trials route to all of them) and dx_expanded
    written once (hidden per assignment), all in the dtype; the int32 expert starts read
    once.  The re-reads of the weights by every routing tile of an expert and of d_pre_act
    by every column program, and the per-tile routing metadata, are not counted."""
    e = ELEMENT_SIZE[dtype]
    assignments = d["tokens"] * d["k"]
    values = assignments * (2 * d["inter"] + d["hidden"])
    values += d["experts"] * 2 * d["inter"] * d["hidden"]
    return e * values + INT32 * (d["experts"] + 1)


_make_inputs = _common.forward_make_inputs(
    "liger_moe_up_proj_dgrad", "tokens", "hidden", "inter", "experts", "k"
)
_make_check_inputs = _common.forward_make_inputs(
    "liger_moe_up_proj_dgrad", "tokens", "hidden", "inter", "experts", "k",
    function="make_check_inputs",
)  # fmt: skip
_reference = _common.forward_reference("liger_moe_up_proj_dgrad")
_baselines = _common.forward_baselines(
    "liger_moe_up_proj_dgrad",
    (
        "torch",
        "torch",
        "HF's expert loop's input gradient in plain torch: one matmul per routed expert "
        "over its sorted d_pre_act rows",
        "torch_moe_up_proj_dgrad",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_moe_up_proj_dgrad.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "assignment rows per routing tile (one expert each; the routing metadata is made "
         "for it); None: Liger's 64"),
    Knob("block_n", "int", (None, 32, 64, 128, 256), "tile_n",
         "hidden columns per program (the grid's second dimension is cdiv(hidden, this)); "
         "None: Liger's pinned 128"),
    Knob("block_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "inter depth per step (each step one gate and one up tl.dot of this depth); "
         "None: Liger's pinned 64"),
    Knob("num_warps", "int", (None, 2, 4, 8, 16), "warps",
         "warps per program; None: Liger's pinned 8"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the intermediate-size loop; None: Liger's pinned 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="liger_moe_up_proj_dgrad",
    description=(
        "Liger-Kernel's fused MoE input gradient through the gate/up projection (0.8.5, "
        "_moe_bwd_dX_expanded_kernel): per expert-sorted routing tile, its rows' SwiGLU "
        "gradient (gate and up halves) times the expert's stacked gate/up weight in two "
        "tl.dot per step over the intermediate size, two fp32 accumulators, bf16 out"
    ),
    dims=(
        Dim("tokens", "tokens in the micro-batch"),
        Dim("hidden", "model width (the GEMM's output columns)"),
        Dim("inter", "expert intermediate size (the GEMM's reduction is twice it)"),
        Dim("experts", "routed experts in the layer"),
        Dim("k", "experts per token (top-k)"),
    ),
    trials=(
        Trial(
            "qwen3_30b_a3b_train_16k_tokens",
            {"tokens": 16384, "hidden": 2048, "inter": 768, "experts": 128, "k": 8},
            "a fine-tuning step of Qwen3-30B-A3B (128 experts of 768, top-8, width 2048) "
            "on a 16,384-token micro-batch (four packed 4k sequences): 131,072 assignments, "
            "1,024 rows per expert on average, about 2,100 routing tiles x 16 column "
            "programs of 12 inter steps; 825 GFLOP, 1.75 GB at the floor (the weights "
            "805 MB, d_pre_act read 403 MB and dx_expanded written 537 MB)",
        ),
        Trial(
            "deepseek_v2_lite_train_4k_tokens",
            {"tokens": 4096, "hidden": 2048, "inter": 1408, "experts": 64, "k": 6},
            "a fine-tuning step of DeepSeek-V2-Lite's routed experts (64 of 1408, top-6, "
            "width 2048) on one 4k sequence: 24,576 assignments, 384 rows per expert on "
            "average, about 415 routing tiles x 16 column programs of 22 inter steps; 283 "
            "GFLOP, 977 MB at the floor (the 738 MB of expert weights three quarters of it)",
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
    # fp32 accumulation over 2 * inter products, rounded once to the dtype; fp32 inputs go
    # through TF32 tensor cores on the GPU
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 2e-3},
    entry_point="moe_up_proj_dgrad",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
