"""FlagGems' fused mHC pre step for four streams (FlagGems v5.0.2, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into third_party/ by
scripts/fetch_third_party.py (`flaggems_mhc_pre`); nothing of it is committed.

Manifold-constrained hyper-connections (DeepSeek, 2025) widen the residual stream into four
streams; before every attention and MLP block FlagGems' `mhc_pre` projects them to 24
logits with a cuBLAS GEMM and then runs this kernel, one program per token: the streams'
sum of squares (pass 1, BLOCK_H columns at a time), the logits normalised by that RMS,
scaled and biased, pre / post sigmoids, a 4 x 4 Sinkhorn in registers, and (pass 2) the
four streams mixed by the pre weights into the block's bf16 input.  A per-token streaming
reduction then weighted sum over [4, hidden]: memory-bound, the floor being reading the
streams once (the kernel reads them twice), the logits once and writing post, comb and the
layer input once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_mhc_pre")

CONTEXTS = ("reduction", "memory-bound")

HC = 4


def bytes_moved(d: Mapping[str, int]) -> int:
    """The bf16 streams read once, the fp32 logits read once, post and comb written (fp32),
    the bf16 layer input written, the 27 scales and biases once."""
    t, h = d["tokens"], d["hidden"]
    return 2 * HC * h * t + 4 * 24 * t + 4 * (HC + HC * HC) * t + 2 * h * t + 4 * 27


def flops(d: Mapping[str, int]) -> int:
    """Per token: a multiply-add per stream element for the squares and another for the
    weighted sum (16 hidden), and about 780 for the logits and the Sinkhorn (as
    flaggems_mhc_sinkhorn counts it); sigmoids, exps and reciprocals not counted."""
    return (16 * d["hidden"] + 780) * d["tokens"]


_make_inputs = _common.forward_make_inputs("flaggems_mhc_pre", "tokens", "hidden")
_reference = _common.forward_reference("flaggems_mhc_pre")
_baselines = _common.forward_baselines(
    "flaggems_mhc_pre",
    (
        "torch",
        "torch",
        "FlagGems' own torch reference after its GEMM: a square-sum over the streams, "
        "sigmoids, a softmax, 39 broadcast divisions and a weighted stream sum",
        "torch_mhc_pre",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_mhc_pre.launcher")


TRITON_KNOBS = (
    Knob("block_h", "int", (None, 128, 256, 512, 1024, 2048), "tile_n",
         "stream columns per step of both passes; None: the autotune list's first, 256"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program (one token); None: the autotune list's first, 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "pipeline stages of the column loops; None: the autotune list's first, 1"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_mhc_pre",
    description=(
        "FlagGems' fused mHC pre step for four streams (v5.0.2): per token, the streams' "
        "RMS, the 24 projected logits normalised into pre / post sigmoids and a 4 x 4 "
        "Sinkhorn, and the streams mixed into the bf16 layer input; one program per token, "
        "BLOCK_H columns a step, two passes"
    ),
    dims=(
        Dim("tokens", "tokens of the step (one program each)", "batch"),
        Dim("hidden", "model width (each stream's length)", "row_len"),
    ),
    trials=(
        Trial(
            "prefill_8192_mhc4_7168",
            {"tokens": 8192, "hidden": 7168},
            "an 8192-token prefill chunk entering one block of an mHC-4 model at "
            "DeepSeek-V3's width 7168 (the mHC paper's models are DeepSeek-V3-style): "
            "8192 programs, 470 MB of streams read (twice by the kernel), 117 MB written",
        ),
        Trial(
            "decode_64_mhc4_7168",
            {"tokens": 64, "hidden": 7168},
            "a 64-sequence decode step at the same width: 64 programs on 132 SMs, 3.7 MB "
            "of streams",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # the layer input is stored in bf16 (one rounding, 2^-8 relative); post and comb fp32
    tolerances={"bfloat16": 1e-2, "float16": 1e-2, "float32": 1e-2},
    entry_point="mhc_pre",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
