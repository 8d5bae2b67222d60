"""Liger-Kernel's RMSNorm forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees it: a
kernel nobody here wrote, imported from the installed `liger_kernel` package (a pure-Triton
wheel, in kbopt's dev extra); nothing of it is copied here.

y = x * rsqrt(mean(x^2) + eps) * w per row with fp32 statistics (Liger's "llama" casting),
bf16 in and out.  No matmul: the floor is reading x and w once and writing y once (Liger's
fp32 rstd per row, 4 bytes, is left out).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial, Version

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("normalization", "reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    return ELEMENT_SIZE[dtype] * (2 * d["rows"] * d["hidden"] + d["hidden"])


_make_inputs = _common.forward_make_inputs("liger_rmsnorm", "rows", "hidden")
_reference = _common.forward_reference("liger_rmsnorm")


def _baselines() -> dict[str, Version]:
    from foreign.liger_rmsnorm import reference

    out = {
        "torch": Version(
            "torch", "torch", "HF Llama RMSNorm in plain torch", reference.torch_rms_norm
        )
    }
    try:
        import torch.nn.functional as F
    except ImportError:  # pragma: no cover - the spec is useless without torch anyway
        return out
    if hasattr(F, "rms_norm"):
        out["torch_rms_norm"] = Version(
            "torch_rms_norm",
            "torch",
            "torch.nn.functional.rms_norm (torch's own fused kernel)",
            lambda x, w, eps: F.rms_norm(x, (x.shape[-1],), w, eps),
        )
    return out


_launch_info = _common.triton_launch_info("foreign.liger_rmsnorm.launcher")


TRITON_KNOBS = (
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16, 32),
        "warps",
        "warps per program; None: Liger's calculate_settings (from the row width)",
    ),
    Knob(
        "block_row",
        "int",
        (None, 1, 2, 4, 8, 16),
        "rows_per_program",
        "rows per program: 1 the row kernel, more the block kernel; None: Liger's choice",
    ),
)

SPEC = KernelSpec(
    name="liger_rmsnorm",
    description="Liger-Kernel's RMSNorm forward (0.8.5, Llama casting): fp32 statistics, bf16",
    dims=(
        Dim("rows", "tokens (rows of x)", "rows"),
        Dim("hidden", "hidden size (the normalized dimension)", "row_len"),
    ),
    trials=(
        Trial(
            "large",
            {"rows": 8192, "hidden": 4096},
            "a Llama-3-8B layer over an 8k-token prefill chunk: 134 MB moved, bandwidth-bound",
        ),
        Trial(
            "decode",
            {"rows": 32, "hidden": 4096},
            "one decode step of 32 tokens: 0.5 MB, 32 programs on 132 SMs, launch-bound",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 statistics and one rounding of y: bf16 ~4e-3 relative, fp16 ~5e-4
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="rms_norm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
