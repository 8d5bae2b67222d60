"""Kernel tests: without a CUDA GPU, Triton kernels can only run in Triton's interpreter.

TRITON_INTERPRET must be set before any ``@triton.jit`` function is defined (Triton reads it
at decoration time), so it is set here, before the test modules import the kernels.
"""

from __future__ import annotations

import os


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


if not _has_cuda():
    os.environ.setdefault("TRITON_INTERPRET", "1")
