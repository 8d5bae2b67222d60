"""Liger-Kernel's attention-residuals forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt
sees it: a kernel nobody here wrote, imported from the installed `liger_kernel` package (a
pure-Triton wheel, in kbopt's dev extra); nothing of it is copied here.

Kimi's attention residuals replace a decoder's residual stream by a softmax over depth: per
token, the N earlier blocks' outputs are RMS-normed into keys, scored against a learned
pseudo-query, and the layer's input is their softmax-weighted sum.  Liger fuses it into one
program per token that reads the token's N rows twice (scores, then the sum).  Outputs: the
weighted sum (bf16) and the fp32 softmax weights and rstd per (token, block).  No matmul:
the floor is reading the N blocks once and writing the sum once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "normalization", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Every block's rows read once (the kernel's second pass is a re-read), the query and
    norm weights, the sum written, and the fp32 weights and rstd per (token, block)."""
    n, t, h = d["blocks"], d["tokens"], d["hidden"]
    return ELEMENT_SIZE[dtype] * (n * t * h + 2 * h + t * h) + 8 * t * n


_make_inputs = _common.forward_make_inputs("liger_attn_res", "blocks", "tokens", "hidden")
_reference = _common.forward_reference("liger_attn_res")
_baselines = _common.forward_baselines(
    "liger_attn_res",
    (
        "torch",
        "torch",
        "the paper's formulation in plain torch: RMSNorm of every block, einsum with the "
        "query, softmax over depth, weighted sum (several kernels)",
        "torch_attn_res",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_attn_res.launcher")


TRITON_KNOBS = (
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16, 32),
        "warps",
        "warps per program (one token, its whole hidden row); None: Liger's, from the row "
        "width (16 at 8192 columns)",
    ),
)

SPEC = KernelSpec(
    name="liger_attn_res",
    description=(
        "Liger-Kernel's attention-residuals forward (0.8.5): softmax over the depth of N "
        "earlier blocks' outputs, RMS-normed keys, one program per token, bf16"
    ),
    dims=(
        Dim("blocks", "earlier blocks attended over (the depth axis)"),
        Dim("tokens", "tokens (one program each)", "rows"),
        Dim("hidden", "model width (the normalized dimension)", "row_len"),
    ),
    trials=(
        Trial(
            "prefill_8b",
            {"blocks": 8, "tokens": 8192, "hidden": 4096},
            "a Llama-3-8B-wide layer over an 8k-token prefill chunk attending over 8 earlier "
            "blocks: 604 MB moved by 8192 one-token programs, each reading 64 KB twice",
        ),
        Trial(
            "decode_70b",
            {"blocks": 16, "tokens": 64, "hidden": 8192},
            "a Llama-3-70B-wide decode step of 64 sequences over 16 blocks: 18 MB in 64 "
            "programs of 16 warps on 132 SMs",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 statistics and sums; the keys are rounded to the weight dtype before the score
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 1e-5},
    entry_point="attn_res",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
