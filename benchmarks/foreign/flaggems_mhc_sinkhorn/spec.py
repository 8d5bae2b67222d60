"""FlagGems' mHC split + Sinkhorn for four streams (FlagGems v5.0.2, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into third_party/ by
scripts/fetch_third_party.py (`flaggems_mhc_sinkhorn`); nothing of it is committed.

Manifold-constrained hyper-connections (DeepSeek, 2025) widen the residual stream into four
streams and mix them around every attention and MLP block with per-token coefficients.
After the tall projection of the streams to 24 logits per token, this kernel splits them:
two sigmoids for the 4 pre and 4 post weights, and the 16 mixing logits taken to a doubly
stochastic 4 x 4 matrix by a row softmax and 20 Sinkhorn row / column normalisations.  One
lane per token, BLOCK_N tokens per program, the matrix in registers; fp32 in and out.
Tiny traffic (96 bytes in, 96 out per token) against about 700 fp32 operations per token:
issue- and latency-bound, the floor being reading the logits once and writing the three
outputs once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_mhc_sinkhorn")

CONTEXTS = ("elementwise", "small-grid")  # the decode trial: 4 programs


def bytes_moved(d: Mapping[str, int]) -> int:
    """The fp32 logits read once, pre, post and comb written once (fp32), the 27 scales and
    biases once."""
    return 4 * (24 + 4 + 4 + 16) * d["tokens"] + 4 * 27


def flops(d: Mapping[str, int]) -> int:
    """Per token: 8 scale-and-bias pairs and the 16 mixing ones (48), the softmax's and the
    first column pass's sums and scalings (about 80), then 19 row and column passes of 16
    adds and 16 multiplies each (608); sigmoids, exps and reciprocals not counted."""
    return 736 * d["tokens"]


_make_inputs = _common.forward_make_inputs("flaggems_mhc_sinkhorn", "tokens")
_reference = _common.forward_reference("flaggems_mhc_sinkhorn")
_baselines = _common.forward_baselines(
    "flaggems_mhc_sinkhorn",
    (
        "torch",
        "torch",
        "FlagGems' own torch fallback: two sigmoids, a softmax and 39 broadcast divisions "
        "over [tokens, 4, 4]",
        "torch_split_sinkhorn",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_mhc_sinkhorn.launcher")


TRITON_KNOBS = (
    Knob("block_n", "int", (None, 16, 32, 64, 128, 256, 512), "tile_m",
         "tokens per program, one per lane; None: FlagGems' by token count (16, 32, 128 "
         "or 256)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: FlagGems' by token count (1, 1, 4 or 8)"),
    Knob("num_stages", "int", (None, 1, 2, 3), "pipeline_stages",
         "pipeline stages (the Sinkhorn loop has no loads); None: FlagGems' 1"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_mhc_sinkhorn",
    description=(
        "FlagGems' mHC split + Sinkhorn for four streams (v5.0.2): per token, pre and post "
        "sigmoids and a 4 x 4 mixing matrix taken doubly stochastic by a softmax and 20 "
        "Sinkhorn passes in registers, BLOCK_N tokens per program, fp32"
    ),
    dims=(Dim("tokens", "tokens of the step (one 4 x 4 matrix each)", "batch"),),
    trials=(
        Trial(
            "prefill_8192_mhc4",
            {"tokens": 8192},
            "an 8192-token prefill chunk through one mHC-4 residual mix (the kernel runs "
            "twice per layer): FlagGems' 128 tokens and 4 warps a program, 64 programs, "
            "1.6 MB moved",
        ),
        Trial(
            "decode_64_mhc4",
            {"tokens": 64},
            "a 64-sequence decode step: FlagGems' 16 tokens and 1 warp a program, 4 programs",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # fp32 throughout; 20 normalisations compound the rounding a little
    tolerances={"bfloat16": 1e-4, "float16": 1e-4, "float32": 1e-4},
    entry_point="split_sinkhorn",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
