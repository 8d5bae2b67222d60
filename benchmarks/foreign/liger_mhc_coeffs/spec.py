"""Liger-Kernel's manifold-constrained hyper-connection coefficients (liger-kernel 0.8.5,
BSD-2-Clause), as kbopt sees it: a kernel nobody here wrote, imported from the installed
`liger_kernel` package (a pure-Triton wheel, in kbopt's dev extra); nothing of it is copied
here.

mHC (DeepSeek, 2025) widens the residual stream into HC streams and mixes them around each
layer with per-token coefficients.  This is their forward: a tall, skinny GEMM (each
token's HC * C stream values times a [HC * C, HC^2 + 2 HC] projection, 24 columns at HC = 4)
fused with the token's RMS, then one program per token for two sigmoids and 20
Sinkhorn-Knopp normalisations of an HC x HC matrix.  Outputs: h_pre, h_post [tokens, HC]
and h_res [tokens, HC, HC], fp32.  The floor is reading the streams and the projection
once (the GEMM's 2 * tokens * HC * C * 24 flops are far below the tensor cores' rate).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "reduction", "memory-bound", "multi-kernel")


def _m(d: Mapping[str, int]) -> int:
    return d["hc"] * d["hc"] + 2 * d["hc"]


def flops(d: Mapping[str, int]) -> int:
    return 2 * d["tokens"] * d["hc"] * d["c"] * _m(d)


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The streams and the projection read once, the fp32 coefficients written once."""
    k = d["hc"] * d["c"]
    return ELEMENT_SIZE[dtype] * (d["tokens"] * k + k * _m(d)) + 4 * d["tokens"] * _m(d)


_make_inputs = _common.forward_make_inputs("liger_mhc_coeffs", "tokens", "hc", "c")
_reference = _common.forward_reference("liger_mhc_coeffs")
_baselines = _common.forward_baselines(
    "liger_mhc_coeffs",
    (
        "torch",
        "torch",
        "plain torch: the projection by a matmul, then the RMS, sigmoids and an unfused "
        "20-step Sinkhorn loop",
        "torch_mhc_coeffs",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_mhc_coeffs.launcher")


TRITON_KNOBS = (
    Knob(
        "block_n",
        "int",
        (None, 16, 32, 64, 128),
        "tile_m",
        "tokens per GEMM program (the tl.dot's M); None: Liger's 32",
    ),
    Knob(
        "block_k",
        "int",
        (None, 32, 64, 128, 256, 512),
        "tile_k",
        "stream values per unrolled GEMM step (the tl.dot's K); None: Liger's 256",
    ),
    Knob(
        "block_m",
        "int",
        (None, 16, 32, 64),
        "tile_n",
        "coefficients per GEMM program (the tl.dot's N); None: Liger's 32",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8),
        "warps",
        "warps per GEMM program; None: Liger's 4",
    ),
    Knob(
        "sinkhorn_warps",
        "int",
        (None, 1, 2, 4),
        "warps",
        "warps per Sinkhorn program (one token's HC x HC matrix); None: Liger's 1",
    ),
)

SPEC = KernelSpec(
    name="liger_mhc_coeffs",
    description=(
        "Liger-Kernel's mHC coefficients forward (0.8.5): a skinny tl.dot GEMM fused with "
        "each token's RMS, then sigmoids and Sinkhorn-Knopp per token, bf16 in, fp32 out"
    ),
    dims=(
        Dim("tokens", "tokens (rows of the GEMM, one Sinkhorn program each)", "rows"),
        Dim("hc", "residual streams (n in the paper; a power of two)"),
        Dim("c", "model width (each stream's length)"),
    ),
    trials=(
        Trial(
            "prefill_hc4_2048",
            {"tokens": 4096, "hc": 4, "c": 2048},
            "a 4k-token prefill chunk through an mHC layer of 4 streams at Qwen3-30B-A3B's "
            "width 2048: 67 MB of streams read by 128 GEMM programs for 1.6 GFLOP (the "
            "8192-deep loop is fully unrolled, 32 steps: a wider model compiles proportionally longer)",
        ),
        Trial(
            "decode_hc4_2048",
            {"tokens": 64, "hc": 4, "c": 2048},
            "the same layer at a 64-sequence decode step: 1 MB read by 2 GEMM programs on 132 SMs",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the projection accumulates in fp32 (TF32 for fp32 inputs on the GPU); the 20 Sinkhorn
    # steps are fp32 and only damp an error in the logits
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 3e-3},
    entry_point="mhc_coeffs",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
