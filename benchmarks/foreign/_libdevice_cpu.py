"""@triton.jit stand-ins for the libdevice functions that Triton 3.6's CPU interpreter lacks
(it returns None for them), for `_common.interpreter_libdevice` in CPU tests only."""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def rsqrt(x):  # type: ignore[no-untyped-def]
    return 1.0 / tl.sqrt(x)


@triton.jit
def tanh(x):  # type: ignore[no-untyped-def]
    return 2.0 * tl.sigmoid(2.0 * x) - 1.0


@triton.jit
def exp(x):  # type: ignore[no-untyped-def]
    return tl.exp(x)
