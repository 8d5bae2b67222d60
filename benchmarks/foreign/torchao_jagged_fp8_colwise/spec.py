"""torchao's dual jagged column-wise fp8 quantization (torchao v0.18.0, BSD-3-Clause), as
kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py torchao_jagged_fp8_colwise` and never committed.

Why this one: torchao's fp8 rowwise MoE training (`MoETrainingConfig`, which torchtitan
applies to the routed experts of Llama 4 and DeepSeek-V3 on H100s) runs the experts'
grouped GEMMs through `torch._scaled_grouped_mm`; in the backward, the weight gradient
grad_B = grad_output^T @ A reduces over the tokens, so both operands need one scale per
column per expert, taken over that expert's contiguous (jagged) rows.  This kernel
quantizes both at once: one program per column block and expert walks the expert's rows
twice, a column-wise absolute maximum in the first pass, the e4m3 cast into a column-major
output in the second, the scales rounded down to powers of two.  The loop's trip count is
the expert's token count (uneven with routing), and the reduction runs down the columns
(across rows), unlike the row-wise and per-token-group quantizations wrapped so far.  Both
trials are training steps with torchao's padding of every expert to 16 rows: Llama 4
Scout's gate projection (the larger) and DeepSeek-V2-Lite's down projection.  Outputs: the
two e4m3 tensors [rows, n] (column-major) and their fp32 scales [groups x n].  No matmul:
the floor is reading both inputs once and writing the e4m3 copies and the scales once (the
kernel reads each input twice).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "torchao_jagged_fp8_colwise")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound")  # a column-wise amax then a cast; no tl.dot


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Both inputs read once in the spec's dtype, both e4m3 copies written once (one byte
    an element), one fp32 scale per group and column of each written once, the int32 group
    end offsets read once.  The second pass's re-read of every input row is not counted."""
    cols = d["n1"] + d["n2"]
    return (ELEMENT_SIZE[dtype] + 1) * d["rows"] * cols + 4 * d["groups"] * (cols + 1)


_make_inputs = _common.forward_make_inputs(
    "torchao_jagged_fp8_colwise", "rows", "groups", "n1", "n2"
)
_reference = _common.forward_reference("torchao_jagged_fp8_colwise")
_baselines = _common.forward_baselines(
    "torchao_jagged_fp8_colwise",
    (
        "torch",
        "torch",
        "the same quantization in torch's kernels (a scatter amax per group and column, "
        "power-of-two scales, a gather of each row's scales, multiply, clamp, cast to e4m3, "
        "a column-major copy), each tensor on its own",
        "torch_jagged_colwise",
    ),
)


_launch_info = _common.triton_launch_info("foreign.torchao_jagged_fp8_colwise.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "columns of both tensors per program; None: torchao's first autotune config, 32"),
    Knob("block_size_iter", "int", (None, 16, 32, 64, 128, 256, 512), "tile_k",
         "rows of the group (the reduction axis) loaded per step of each of the two row loops; None: torchao's "
         "first autotune config, 64"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: torchao's first autotune config, 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the row loops; None: torchao's first autotune config, 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="torchao_jagged_fp8_colwise",
    description=(
        "torchao's dual jagged column-wise fp8 quantization (v0.18.0, "
        "triton_fp8_per_group_colwise_scales_dual, fp8 rowwise MoE training's wgrad "
        "operands): one program per column block and expert walks the expert's rows twice "
        "(column amax, then the e4m3 cast into a column-major copy), power-of-two scales "
        "per expert and column, both tensors in one launch"
    ),
    dims=(
        Dim("rows", "routed token rows of all experts (each expert's padded to 16)"),
        Dim("groups", "experts (token groups), each a contiguous run of rows"),
        Dim("n1", "grad_output's width (the expert projection's outputs)"),
        Dim("n2", "the saved input's width (the expert projection's inputs)"),
    ),
    # A Llama 4 Scout step first (16 experts of about 1,024 rows, 4,096 programs walking
    # 16 row steps twice; 655 MB), then a DeepSeek-V2-Lite one (64 experts of about 384 rows,
    # 4,096 programs of 6 steps, 20 of every 64 column blocks with only grad_output's work).
    trials=(
        Trial(
            "llama4_scout_16k_w1_wgrad",
            {"rows": 16384, "groups": 16, "n1": 8192, "n2": 5120},
            "Llama 4 Scout (17B-16E, top-1 routing) trained with torchao's fp8 rowwise MoE "
            "recipe, two 8192-token sequences a GPU: the gate projection's weight gradient "
            "(5120 -> 8192) quantizes the 16,384 routed rows' grad_output [rows, 8192] and "
            "input [rows, 5120] per expert and column: torchao's first config, 256 x 16 = "
            "4,096 programs, 655 MB moved (bf16)",
        ),
        Trial(
            "deepseek_v2_lite_4k_w2_wgrad",
            {"rows": 24576, "groups": 64, "n1": 2048, "n2": 1408},
            "DeepSeek-V2-Lite (64 routed experts, top-6; torchtitan's DeepSeek-V3 16B "
            "flavour) trained with the same recipe, one 4096-token sequence a GPU: the down "
            "projection's weight gradient (1408 -> 2048) over 24,576 routed rows: 64 x 64 = "
            "4,096 programs, blocks 44 to 63 past the input's 1408 columns, 256 MB moved",
        ),
    ),
    backoff_dim="rows",
    # each program reduces a column segment as long as its expert's rows: the mean of those
    # (rows / groups) is the length a row-wise kernel's row_len states; no split of it
    shape_metrics=lambda d: {"row_len": -(-d["rows"] // d["groups"])},
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # power-of-two scales make the products exact: an e4m3 value differs only where the
    # hardware's approximate log2 moves a scale across a power of two (one step, 2x)
    tolerances={"bfloat16": 1e-3, "float16": 1e-3, "float32": 1e-3},
    entry_point="jagged_fp8_colwise_dual",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
    dtype="bfloat16",
)
