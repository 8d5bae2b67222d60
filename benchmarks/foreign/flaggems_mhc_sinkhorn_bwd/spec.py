"""FlagGems' mHC Sinkhorn backward for four streams (FlagGems v5.0.2, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_mhc_sinkhorn_bwd` and never committed.

Why this one: manifold-constrained hyper-connections (DeepSeek, 2025) widen the residual
stream into four streams and mix them around every attention and MLP block with a per-token
4 x 4 matrix taken doubly stochastic by Sinkhorn normalisation; training backpropagates
through that normalisation twice a layer.  FlagGems' `mhc_bwd` does not unroll the 20
Sinkhorn passes backwards: it differentiates the fixed point implicitly, solving an
8-unknown linear system per token, [I R; R^T I] (x1, x2) = (row sums, column sums of
R * dR), by 8 conjugate-gradient iterations, and returns dM = (dR - x1[i] - x2[j]) * R.
The kernel keeps one token per lane, the 4 x 4 R, the right-hand side and the CG vectors
in registers (about 100 live fp32 values a lane), 64 tokens a program; 128 bytes read and
64 written per token against about 1,270 fp32 operations (including 16 divisions): the
iteration count, not the traffic, sets its time.  Both trials are mHC-4 training steps
at the 4,096-token context of the mHC paper's pre-training runs: a micro-batch of eight
sequences (32,768 tokens, 512 programs) and of one (4,096 tokens, 64 programs, under one
wave of 132 SMs).  Output: the gradient at the Sinkhorn's input, [tokens, 4, 4] fp32.  The
floor is the larger of reading R and dR and writing the result once, and the arithmetic.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_mhc_sinkhorn_bwd")

# a lane per token, no tl.dot, no loads in the loop: the CG iterations bound it; the
# one-sequence trial has 64 programs
CONTEXTS = ("elementwise", "compute-bound", "small-grid")

HC = 4
CG_ITERS = 2 * HC
# per CG iteration: two 4 x 4 matrix-vector products plus p (64), p.Ap (15), alpha (2),
# x and r updates (32), r.r (15), beta (2), the p update (16)
FLOPS_PER_ITER = 146
# before: R * dR (16), row and column sums (24), r.r (15); after: dM's 16 x (2 subtractions
# and a multiply)
FLOPS_OUTSIDE = 55 + 48


def bytes_moved(d: Mapping[str, int]) -> int:
    """R and dR read once and dM written once, [tokens, 4, 4] fp32 each."""
    return 3 * 4 * HC * HC * d["tokens"]


def flops(d: Mapping[str, int]) -> int:
    """Per token: 8 CG iterations of 146 fp32 operations (two divisions among them, each
    counted as one) and 103 before and after them."""
    return (CG_ITERS * FLOPS_PER_ITER + FLOPS_OUTSIDE) * d["tokens"]


_make_inputs = _common.forward_make_inputs("flaggems_mhc_sinkhorn_bwd", "tokens")
_reference = _common.forward_reference("flaggems_mhc_sinkhorn_bwd")
_baselines = _common.forward_baselines(
    "flaggems_mhc_sinkhorn_bwd",
    (
        "torch",
        "torch",
        "FlagGems' own torch path (mhc_bwd_ref): the same 8 CG iterations as broadcast "
        "fp32 ops over [tokens, 4, 4]",
        "torch_sinkhorn_bwd",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_mhc_sinkhorn_bwd.launcher")


TRITON_KNOBS = (
    Knob("block_s", "int", (None, 16, 32, 64, 128, 256, 512), "tile_m",
         "tokens per program, one per lane (fewer lanes than warps x 32 replicate the "
         "work); None: FlagGems' 64"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: FlagGems' (Triton's default) 4, so two lanes a token at "
         "64 tokens"),
    Knob("num_stages", "int", (None, 1, 2, 3), "pipeline_stages",
         "pipeline stages (the CG loop has no loads); None: FlagGems' (Triton's default) 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_mhc_sinkhorn_bwd",
    description=(
        "FlagGems' mHC Sinkhorn backward for four streams (v5.0.2, _mhc_bwd_kernel_n4 as "
        "mhc_bwd launches it): per token, implicit differentiation of the Sinkhorn fixed "
        "point by 8 conjugate-gradient iterations on an 8-unknown system in registers, "
        "64 tokens a program, fp32"
    ),
    dims=(Dim("tokens", "tokens of the micro-batch (one 4 x 4 matrix each)", "batch"),),
    # A long micro-batch first (several waves), then one sequence (under one wave).
    trials=(
        Trial(
            "train_8x4096_mhc4",
            {"tokens": 32768},
            "an mHC-4 training step, eight 4,096-token sequences a micro-batch (the mHC "
            "paper's pre-training context), one of the two Sinkhorn backwards of a layer: "
            "FlagGems' 64 tokens and 4 warps a program, 512 programs, 6.3 MB moved, "
            "41.6 MFLOP",
        ),
        Trial(
            "train_1x4096_mhc4",
            {"tokens": 4096},
            "the same with one 4,096-token sequence a micro-batch (a long-context or "
            "deeply pipelined run): 64 programs, under one wave of 132 SMs, 0.79 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # fp32 CG against the fp64 one: near convergence the residual's rounding differs, the
    # gradient by a few fp32 ulps of dR's scale
    tolerances={"bfloat16": 1e-3, "float16": 1e-3, "float32": 1e-3},
    entry_point="sinkhorn_bwd",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
