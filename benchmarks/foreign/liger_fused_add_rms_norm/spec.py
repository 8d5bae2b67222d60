"""Liger-Kernel's fused residual-add RMSNorm forward (liger-kernel 0.8.5, BSD-2-Clause), as
kbopt sees it: a kernel nobody here wrote, imported from the installed `liger_kernel`
package (a pure-Triton wheel, in kbopt's dev extra); nothing of it is copied here.

The pair every Llama-style decoder layer runs twice: s = x + residual, y = RMSNorm(s) * w
with fp32 statistics (Liger's "llama" casting), bf16.  Outputs: y and s (the new residual
stream).  No matmul: the floor is reading x, the residual and w once and writing y and s
once (Liger's fp32 rstd per row, 4 bytes, is left out).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("normalization", "reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    return ELEMENT_SIZE[dtype] * (4 * d["rows"] * d["hidden"] + d["hidden"])


_make_inputs = _common.forward_make_inputs("liger_fused_add_rms_norm", "rows", "hidden")
_reference = _common.forward_reference("liger_fused_add_rms_norm")
_baselines = _common.forward_baselines(
    "liger_fused_add_rms_norm",
    (
        "torch",
        "torch",
        "HF Llama's residual add and LlamaRMSNorm in plain torch (several kernels)",
        "torch_add_rms_norm",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_fused_add_rms_norm.launcher")


TRITON_KNOBS = (
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16, 32),
        "warps",
        "warps per program (one whole row); None: Liger's calculate_settings (from the row width)",
    ),
)

SPEC = KernelSpec(
    name="liger_fused_add_rms_norm",
    description=(
        "Liger-Kernel's fused residual-add RMSNorm forward (0.8.5, Llama casting): new "
        "residual and normed output, one program per row, bf16"
    ),
    dims=(
        Dim("rows", "tokens (rows of x)", "rows"),
        Dim("hidden", "hidden size (the normalized dimension)", "row_len"),
    ),
    trials=(
        Trial(
            "prefill",
            {"rows": 8192, "hidden": 4096},
            "a Llama-3-8B layer over an 8k-token prefill chunk: 268 MB moved (two rows read, "
            "two written), bandwidth-bound",
        ),
        Trial(
            "decode_70b",
            {"rows": 64, "hidden": 8192},
            "a Llama-3-70B decode step of 64 sequences: 4 MB in 64 programs of 16 warps on "
            "132 SMs, latency-bound",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # s rounded to the dtype before the statistics, the product in the dtype: three roundings
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 1e-5},
    entry_point="add_rms_norm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
