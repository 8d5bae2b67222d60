"""Liger-Kernel's mHC stream update (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees it: a
kernel nobody here wrote, imported from the installed `liger_kernel` package (a pure-Triton
wheel, in kbopt's dev extra); nothing of it is copied here.

Manifold-constrained hyper-connections (DeepSeek, 2025) keep HC residual streams per token;
after the wrapped layer each stream becomes h_post[o] * f + sum_i h_res[o, i] * x[i].  Liger
computes that in one kernel with an fp32 output, then casts it to the streams' dtype with
torch.  Output: [tokens, HC, C], bf16.  No matmul worth the tensor cores (HC = 4): the
floor is reading the streams and the layer output once and writing the streams once (the
fp32 round trip through the cast is the implementation's).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound", "multi-kernel")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Streams read and written, the layer output read, the fp32 coefficients read."""
    n, hc, c = d["tokens"], d["hc"], d["c"]
    return ELEMENT_SIZE[dtype] * (2 * n * hc * c + n * c) + 4 * n * (hc + hc * hc)


_make_inputs = _common.forward_make_inputs("liger_mhc_post_res", "tokens", "hc", "c")
_reference = _common.forward_reference("liger_mhc_post_res")
_baselines = _common.forward_baselines(
    "liger_mhc_post_res",
    (
        "torch",
        "torch",
        "plain torch in the streams' dtype: a batched [HC, HC] x [HC, C] matmul, then addcmul",
        "torch_mhc_post_res",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_mhc_post_res.launcher")


TRITON_KNOBS = (
    Knob(
        "block_n",
        "int",
        (None, 4, 8, 16, 32, 64),
        "rows_per_program",
        "tokens per program; None: Liger's 32",
    ),
    Knob(
        "block_c",
        "int",
        (None, 32, 64, 128, 256, 512),
        "tile_n",
        "columns per program; None: Liger's, from the width (128 from 2048 columns, else 64)",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 2, 4, 8, 16),
        "warps",
        "warps per program; None: Liger's, from the width (8 from 4096 columns)",
    ),
    Knob(
        "num_stages",
        "int",
        (None, 1, 2, 3, 4),
        "pipeline_stages",
        "software-pipeline depth (the loop over the HC streams is unrolled); None: Liger's, "
        "from the width (3 from 4096 columns)",
    ),
)

SPEC = KernelSpec(
    name="liger_mhc_post_res",
    description=(
        "Liger-Kernel's mHC stream update forward (0.8.5): h_post * f + h_res @ x per token "
        "into an fp32 [tokens, HC, C], then torch's cast to bf16"
    ),
    dims=(
        Dim("tokens", "tokens", "rows"),
        Dim("hc", "residual streams (n in the paper; a power of two)"),
        Dim("c", "model width (each stream's length)", "row_len"),
    ),
    trials=(
        Trial(
            "prefill_hc4_4096",
            {"tokens": 4096, "hc": 4, "c": 4096},
            "a 4k-token prefill chunk through an mHC layer of 4 streams at Llama-3-8B's width: "
            "302 MB at the floor, 4096 programs of 32 x 128",
        ),
        Trial(
            "decode_hc4_8192",
            {"tokens": 64, "hc": 4, "c": 8192},
            "a 64-sequence decode step at Llama-3-70B's width: 9 MB at the floor, 128 programs "
            "on 132 SMs",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation, rounded once to the streams' dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="mhc_post_res",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
