"""FlagGems' RMSNorm backward (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: kernels
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_rms_norm_backward` and never committed.

Why this one: FlagGems replaces aten's rms_norm with its own `RmsNorm` autograd function
when it is enabled, and every training step of a Llama- or Qwen-style model runs its
backward twice per layer (before attention and before the MLP) and once at the end.  Two
Triton launches and a torch reduction: the input gradient, one program per row holding the
whole row of x, dy and the weight in registers (one next_power_of_2(hidden)-wide block, no
loop: at hidden 8192 and Triton's default 4 warps, 64 fp32 values of each per thread), one
fp32 row sum of dy * w * x_hat, then dx; and the weight gradient, one program per 16-row x
256-column tile writing the tile's column sums of x * dy * inv_rms into an fp32 partial
buffer, which torch sums over its rows and casts.  Memory-bound; the weight-gradient pass
reads x and dy a second time.  Trials: a training step of Llama 3.1 70B (hidden 8192) on a
16,384-token micro-batch (two 8k sequences; 16,384 row programs of an 8192-wide block, 1024
x 32 partial tiles) and of Qwen2.5-7B (hidden 3584, a 4096-wide block with its last 512
columns masked) on one 4k sequence.  The floor is reading dy and x once and writing dx
once, plus inv_rms, the weight and dw.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_rms_norm_backward")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("normalization", "reduction", "memory-bound", "multi-kernel")
FP32 = 4


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """dy and x read once, dx written once, the weight read and dw written once (all in the
    dtype), and the fp32 inv_rms read once."""
    m, n = d["rows"], d["hidden"]
    return (3 * m * n + 2 * n) * ELEMENT_SIZE[dtype] + FP32 * m


def flops(d: Mapping[str, int]) -> int:
    """About 11 per element: x_hat and dy * w (2), the row sum of their product (2), dx
    (4), the weight gradient's product and sum (3)."""
    return 11 * d["rows"] * d["hidden"]


_make_inputs = _common.forward_make_inputs("flaggems_rms_norm_backward", "rows", "hidden")
_reference = _common.forward_reference("flaggems_rms_norm_backward")
_baselines = _common.forward_baselines(
    "flaggems_rms_norm_backward",
    (
        "torch",
        "torch",
        "aten's _fused_rms_norm_backward from the same fp32 inv_rms (eager fp32 torch ops "
        "where the build lacks it for the device)",
        "torch_rms_norm_backward",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_rms_norm_backward.launcher")


TRITON_KNOBS = (
    Knob("dx_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program of the input gradient (one whole row a program: fewer warps, "
         "more of the row per thread); None: Triton's default 4, as FlagGems passes none"),
    Knob("dw_block_rows", "int", (None, 4, 8, 16, 32, 64, 128), "tile_m",
         "rows a weight-gradient program sums into one partial row (the partial buffer has "
         "cdiv(rows, this) rows for torch to sum); None: FlagGems' ROW_BLOCK_SIZE, 16"),
    Knob("dw_block_cols", "int", (None, 64, 128, 256, 512, 1024), "tile_n",
         "columns per weight-gradient program; None: FlagGems' COL_BLOCK_SIZE, 256"),
    Knob("dw_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program of the weight gradient; None: Triton's default 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_rms_norm_backward",
    description=(
        "FlagGems' RMSNorm backward (v5.0.2, rms_norm_grad_dx_kernel and "
        "rms_norm_grad_dw_kernel): the input gradient one whole row per program in "
        "registers, then the weight gradient's fp32 partial sums per 16 x 256 tile, summed "
        "by torch"
    ),
    dims=(
        Dim("rows", "normalized rows (tokens) in the micro-batch", "rows"),
        Dim("hidden", "normalized size (the hidden size)", "row_len"),
    ),
    trials=(
        Trial(
            "llama31_70b_train_16k_tokens",
            {"rows": 16384, "hidden": 8192},
            "a training step of Llama 3.1 70B (hidden 8192) on a 16,384-token micro-batch "
            "(two 8k sequences): 16,384 row programs of an 8192-wide block, 1024 x 32 "
            "weight-gradient tiles into a 1024 x 8192 fp32 partial buffer; 805 MB at the "
            "floor (bf16)",
        ),
        Trial(
            "qwen25_7b_train_4k_tokens",
            {"rows": 4096, "hidden": 3584},
            "a training step of Qwen2.5-7B (hidden 3584) on one 4k sequence: 4096 row "
            "programs of a 4096-wide block (the last 512 columns masked), 256 x 14 "
            "weight-gradient tiles; 88 MB at the floor (bf16)",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums over a row (dx) and over every row (dw), rounded once to the dtype
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 1e-4},
    entry_point="rms_norm_backward",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
