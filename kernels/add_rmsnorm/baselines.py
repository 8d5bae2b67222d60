"""The baselines every add_rmsnorm version is compared with (not versions themselves).

- ``torch``: plain eager torch in the input dtype (``reference.torch_add_rmsnorm``);
- ``torch_compile``: ``torch.compile`` of that same function, compiled on the first call
  (untimed: kbopt checks correctness before it times) and cached for the process;
- ``liger``: Liger-Kernel's fused add + RMSNorm Triton kernel
  (``liger_kernel.ops.fused_add_rms_norm.LigerFusedAddRMSNormFunction``, casting mode
  "llama", out of place), imported on the first call.

A baseline whose dependency is missing is left out with a note on stderr.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from typing import Any

import torch

from kernels.add_rmsnorm import reference

_COMPILED: dict[str, Any] = {}
_LIGER: dict[str, Any] = {}


def torch_compile_available() -> tuple[bool, str]:
    """(usable, why not): Dynamo on this Python, and a C++ compiler for Inductor on a CPU."""
    try:
        import torch._dynamo as dynamo
    except Exception as exc:  # a broken or stripped torch build
        return False, f"torch._dynamo does not import: {type(exc).__name__}: {exc}"
    if not dynamo.is_dynamo_supported():
        return False, f"torch.compile does not support Python {sys.version.split()[0]}"
    if not torch.cuda.is_available() and not any(
        shutil.which(c) for c in ("g++", "c++", "clang++")
    ):
        return False, "no CUDA device and no C++ compiler for Inductor's CPU backend"
    return True, ""


def torch_compile_add_rmsnorm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """torch.compile(reference.torch_add_rmsnorm), compiled once per process."""
    fn = _COMPILED.get("fn")
    if fn is None:
        fn = _COMPILED["fn"] = torch.compile(reference.torch_add_rmsnorm, dynamic=False)
    return fn(x, residual, weight, eps)


def liger_available() -> tuple[bool, str]:
    """(installed, why not), without importing liger_kernel (its import takes seconds)."""
    try:
        found = importlib.util.find_spec("liger_kernel") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        return False, "liger_kernel is not installed (pip install liger-kernel)"
    return True, ""


def liger_add_rmsnorm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Liger's fused add + RMSNorm forward: (y, residual_out), inputs untouched.

    Liger adds in the input dtype and, in "llama" casting mode, computes the statistics in
    fp32 from that sum and multiplies by the weight in the input dtype; it also writes one
    fp32 rstd per row for its backward pass (4 bytes a row, not counted in bytes_moved).
    """
    fn = _LIGER.get("apply")
    if fn is None:
        from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction

        fn = _LIGER["apply"] = LigerFusedAddRMSNormFunction.apply
    y, residual_out = fn(x, residual, weight, eps, 0.0, "llama", False)
    return y, residual_out
