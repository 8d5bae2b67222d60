"""Fused residual add + RMSNorm, as kbopt sees it: dims, trial matrix, reference, roofline.

``residual_out = x + residual`` (summed in fp32, stored in the input dtype) and
``y = residual_out * rsqrt(mean(residual_out**2) + eps) * weight`` (statistics in fp32
from the fp32 sum), returning new tensors ``(y, residual_out)``: vLLM's
``fused_add_rms_norm``, out of place.  Every version exports
``add_rmsnorm(x [rows, hidden], residual [rows, hidden], weight [hidden], eps)``.

No matmul: flops is 0 and the floor is the memory floor, reading x, residual and weight
once and writing y and residual_out once.  torch and triton are imported inside the
functions below, so the spec loads on a machine without them.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from kbopt.kernel import Dim, KernelSpec, Knob, Trial, Version

ELEMENT_SIZE = {"float32": 4, "float16": 2, "bfloat16": 2}


def bytes_moved(dims: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Fewest DRAM bytes: read x, residual (rows x hidden) and weight (hidden) once, write
    y and residual_out (rows x hidden) once."""
    rows, hidden = dims["rows"], dims["hidden"]
    return ELEMENT_SIZE[dtype] * (4 * rows * hidden + hidden)


def _make_inputs(
    dims: Mapping[str, int], *, dtype: Any, device: str, seed: int | None = None
) -> tuple[Any, ...]:
    from kernels.add_rmsnorm import reference

    return reference.make_inputs(
        dims["rows"], dims["hidden"], dtype=dtype, device=device, seed=seed
    )


def _reference(x: Any, residual: Any, weight: Any, eps: float) -> Any:
    from kernels.add_rmsnorm import reference

    return reference.reference(x, residual, weight, eps)


def _baselines() -> dict[str, Version]:
    """Plain torch, torch.compile of it (when usable) and Liger-Kernel (when installed)."""
    from kernels.add_rmsnorm import baselines, reference

    out = {
        "torch": Version(
            "torch",
            "torch",
            "plain eager torch: add in the input dtype, fp32 statistics (HF Llama RMSNorm)",
            reference.torch_add_rmsnorm,
        ),
    }
    ok, why = baselines.torch_compile_available()
    if ok:
        out["torch_compile"] = Version(
            "torch_compile",
            "torch",
            "torch.compile of the plain torch function (compiled on the first, untimed call)",
            baselines.torch_compile_add_rmsnorm,
        )
    else:
        print(f"[add_rmsnorm] torch_compile baseline skipped: {why}", file=sys.stderr)
    ok, why = baselines.liger_available()
    if ok:
        out["liger"] = Version(
            "liger",
            "liger",
            "Liger-Kernel's fused add + RMSNorm Triton kernel (llama casting, out of place)",
            baselines.liger_add_rmsnorm,
        )
    else:
        print(f"[add_rmsnorm] liger baseline skipped: {why}", file=sys.stderr)
    return out


def _launch_info(family: str) -> dict[str, Any]:
    """Where the Triton launches record what they chose (warps, grid, registers)."""
    if family == "triton":
        from kernels.add_rmsnorm import triton_common

        return triton_common.LAST_INFO
    return {}


# The fields of triton_common.AddRmsNormConfig; every triton_v* module sets CONFIG.
TRITON_KNOBS = (
    Knob(
        "block",
        "int",
        (None, 64, 128, 256, 512, 1024, 2048),
        "tile_n",
        "triton_v1: columns per step of its two-pass loop; one-pass versions need None "
        "(the whole row, next_pow2(hidden))",
        default=None,
    ),
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16, 32),
        "warps",
        "warps per program; None: sized from vectors_per_thread",
        default=None,
    ),
    Knob(
        "vectors_per_thread",
        "int",
        (1, 2, 4, 8),
        "vector_width",
        "16-byte vectors of each streamed tensor per thread, when num_warps is None",
        default=4,
    ),
    Knob(
        "rows_per_program",
        "int",
        (1, 2, 4, 8),
        "rows_per_program",
        "rows per block (halved while the grid would have fewer programs than SMs)",
        default=1,
    ),
    Knob(
        "persistent",
        "bool",
        (False, True),
        "persistent",
        "one wave of programs striding over the row blocks",
        default=False,
    ),
    Knob(
        "programs_per_sm",
        "int",
        (None, 1, 2, 3, 4, 6, 8),
        "occupancy",
        "persistent grid: programs per SM; None: as many as fit resident",
        default=None,
    ),
    Knob(
        "num_stages",
        "int",
        (1, 2, 3, 4),
        "pipeline_stages",
        "persistent loop: software pipelining depth (cp.async ring), lowered if it won't fit",
        default=1,
    ),
    Knob(
        "evict",
        "bool",
        (False, True),
        "cache_hints",
        "evict_first on streamed loads and stores, evict_last on the weight",
        default=False,
    ),
)

SPEC = KernelSpec(
    name="add_rmsnorm",
    description=(
        "fused residual add + RMSNorm of an LLM layer, out of place: residual_out = x + "
        "residual, y = rmsnorm(residual_out) * weight; bf16 in and out, fp32 statistics"
    ),
    contexts=("normalization", "reduction", "elementwise", "memory-bound"),
    dims=(
        Dim("rows", "tokens (rows of x and residual)", "rows"),
        Dim("hidden", "hidden size (elements per row, the normalized dimension)", "row_len"),
    ),
    trials=(
        Trial(
            "large",
            {"rows": 8192, "hidden": 4096},
            "a Llama-3-8B layer over an 8k-token prefill chunk: 268 MB moved, bandwidth-bound",
        ),
        Trial(
            "xlarge",
            {"rows": 32768, "hidden": 8192},
            "a 70B-class hidden size over a 32k-token batch: 2.1 GB moved, far beyond the L2",
        ),
        Trial(
            "decode",
            {"rows": 32, "hidden": 4096},
            "one decode step of 32 tokens: 1 MB moved, launch-bound",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # Relative error against the fp32 reference (rows=64, hidden=4096, round-to-nearest
    # as on the GPU): bf16 1.8e-3 for the one-pass versions (one rounding of y and of
    # residual_out), 2.5e-3 for triton_v1 (y from the rounded sum), 2.9e-3 for torch and
    # Liger (y rounded before the weight multiply); fp16 2.2e-4 / 3.1e-4 / 3.7e-4; fp32
    # below 1e-7.  The tolerances leave a margin of 3x or more over the worst of them.
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="add_rmsnorm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch", "torch_compile", "liger"),
    launch_info=_launch_info,
)
