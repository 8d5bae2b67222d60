"""Liger-Kernel's fused MoE gate/up weight gradient (liger-kernel 0.8.5, BSD-2-Clause), as
kbopt sees it: a kernel nobody here wrote, imported from the installed `liger_kernel`
package (a pure-Triton wheel, in kbopt's dev extra); nothing of it is copied here.

Why this one: Liger's `LigerExperts` replaces the stacked-weight experts of Mixtral,
Qwen3-MoE, Qwen3-VL-MoE, Qwen3-Next, Qwen3.5-MoE, DeepSeek-V2/V3, GLM-4.5V and Hunyuan-MoE
(transformers v5) when a fine-tuning run applies Liger's patches, and every MoE layer's
backward then ends with `_moe_bwd_dW1_kernel`, one of its two largest GEMMs (with the
input gradient's): the gradient of every expert's stacked gate and up weights, dW1[e] =
d_pre_act[rows of e]^T @ x[tokens of e].  A grouped GEMM whose reduction is the ragged
dimension: each expert's own assignments, read through the routing's expert start offsets
and, for x, a gather index per row, while the output is a whole [2 * inter, hidden] slab
per expert.  One program per (expert, 64 hidden columns, 128 gradient rows) walks its
expert's rows 32 at a time (one gathered x tile, one contiguous d_pre_act tile, one tl.dot
into fp32) and stores its tile once; an expert with no rows exits at once.  The liger MoE
wrappers so far are forward GEMMs whose reduction is the model width (liger_moe_up_proj,
liger_moe_down_proj); here the work per program follows the router's load, and the
gradient's write outweighs the inputs' reads.  Trials: a Qwen3-30B-A3B fine-tuning step
(128 experts of 768, top-8, width 2048) on a 16,384-token micro-batch (1,024 rows per
expert on average: 32 steps a program) and a DeepSeek-V2-Lite one (64 routed experts of
1408, top-6, width 2048) on 4,096 tokens (384 rows: 12 steps), where the 738 MB gradient
takes as long to write as the math takes on the tensor cores.  The floor is the larger of
the tensor-core time for the products and the time to read x and d_pre_act once and write
the gradient once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
# the 16k trial is compute-bound; the 4k one sits at the ridge (the gradient's write)
CONTEXTS = ("gemm", "grouped-gemm")
INT32 = 4


def flops(d: Mapping[str, int]) -> int:
    """2 per multiply-add: every assignment's row of 2 * inter gradient values times its
    token's hidden values."""
    return 2 * d["tokens"] * d["k"] * 2 * d["inter"] * d["hidden"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x read once (tokens x hidden), d_pre_act read once (one row of 2 * inter per
    assignment) and the gradient written once (experts x 2 * inter x hidden), all in the
    dtype; the int32 gather indices (one per assignment) and expert starts read once.  The
    re-reads of each expert's rows by its other programs and the zero fill (set-up) are not
    counted."""
    e = ELEMENT_SIZE[dtype]
    assignments = d["tokens"] * d["k"]
    two_inter = 2 * d["inter"]
    values = d["tokens"] * d["hidden"] + assignments * two_inter
    values += d["experts"] * two_inter * d["hidden"]
    return e * values + INT32 * (assignments + d["experts"] + 1)


_make_inputs = _common.forward_make_inputs(
    "liger_moe_up_proj_wgrad", "tokens", "hidden", "inter", "experts", "k"
)
_make_check_inputs = _common.forward_make_inputs(
    "liger_moe_up_proj_wgrad", "tokens", "hidden", "inter", "experts", "k",
    function="make_check_inputs",
)  # fmt: skip
_reference = _common.forward_reference("liger_moe_up_proj_wgrad")
_baselines = _common.forward_baselines(
    "liger_moe_up_proj_wgrad",
    (
        "torch",
        "torch",
        "HF's expert loop's weight gradient in plain torch: each routed expert's token rows "
        "gathered and one matmul per expert into a zeroed gradient",
        "torch_moe_up_proj_wgrad",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_moe_up_proj_wgrad.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "hidden columns per program (the grid's first dimension is experts x "
         "cdiv(hidden, this)); None: Liger's pinned 64"),
    Knob("block_n", "int", (None, 32, 64, 128, 256), "tile_n",
         "gate/up gradient rows per program, of 2 * inter; None: Liger's pinned 128"),
    Knob("block_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "expert rows (the reduction) per tl.dot step: the x rows gathered and the "
         "d_pre_act rows read each step; None: Liger's pinned 32"),
    Knob("num_warps", "int", (None, 2, 4, 8, 16), "warps",
         "warps per program; None: Liger's pinned 8"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the loop over the expert's rows; None: Liger's "
         "pinned 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="liger_moe_up_proj_wgrad",
    description=(
        "Liger-Kernel's fused MoE gate/up weight gradient (0.8.5, _moe_bwd_dW1_kernel): per "
        "expert, its d_pre_act rows transposed times its tokens' gathered x rows, the "
        "reduction over the expert's own assignments in tl.dot steps, one bf16 slab per "
        "expert"
    ),
    dims=(
        Dim("tokens", "tokens in the micro-batch"),
        Dim("hidden", "model width (the gradient's columns)"),
        Dim("inter", "expert intermediate size (gate and up each: 2 * inter gradient rows)"),
        Dim("experts", "routed experts in the layer"),
        Dim("k", "experts per token (top-k)"),
    ),
    trials=(
        Trial(
            "qwen3_30b_a3b_train_16k_tokens",
            {"tokens": 16384, "hidden": 2048, "inter": 768, "experts": 128, "k": 8},
            "a fine-tuning step of Qwen3-30B-A3B (128 experts of 768, top-8, width 2048) "
            "on a 16,384-token micro-batch (four packed 4k sequences): 131,072 assignments, "
            "1,024 rows per expert on average, 4,096 x 12 programs of 32 row steps at the "
            "mean; 825 GFLOP, 1.28 GB at the floor (the 805 MB gradient the largest part)",
        ),
        Trial(
            "deepseek_v2_lite_train_4k_tokens",
            {"tokens": 4096, "hidden": 2048, "inter": 1408, "experts": 64, "k": 6},
            "a fine-tuning step of DeepSeek-V2-Lite's routed experts (64 of 1408, top-6, "
            "width 2048) on one 4k sequence: 24,576 assignments, 384 rows per expert on "
            "average, 2,048 x 22 programs of 12 row steps; 284 GFLOP, 894 MB at the floor "
            "(the 738 MB gradient's write about as long as the math)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    make_check_inputs=_make_check_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation over an expert's rows, rounded once; fp32 inputs go through TF32
    # tensor cores on the GPU
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 2e-3},
    entry_point="moe_up_proj_wgrad",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
