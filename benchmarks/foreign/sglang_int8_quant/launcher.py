"""SGLang's per-token int8 activation quantization (python/sglang/srt/layers/quantization/
int8_kernel.py, v0.5.9), launched by our copy of SGLang's `per_token_quant_int8` so that its
launch choice is a knob.

W8A8 int8 serving quantizes every activation row before its int8 GEMM: one program per
token loads the whole row (BLOCK = next_pow2(hidden) columns, masked) into registers in
fp32, takes its absolute maximum, writes the row rounded to int8 at scale absmax / 127 and
the fp32 scale.  SGLang's choices: BLOCK = next_pow2(hidden), num_warps = min(max(BLOCK //
256, 1), 8), num_stages = 1, no row sums (`cal_sum=False`).  Knob: `num_warps`, None
keeping SGLang's.  The row is never split: BLOCK is the row, not a knob.

SGLang allocates the int8 rows and scales per call; here they are allocated in `prepare`,
outside the timed call.  Under the CPU interpreter (tests only) libdevice's `round`, which
Triton 3.6's interpreter lacks, is replaced by a @triton.jit equivalent (half away from
zero, as libdevice rounds).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
import triton
import triton.language as tl

from foreign import _common

LAST_INFO: dict[str, Any] = {}


@dataclass(frozen=True)
class Int8QuantConfig:
    num_warps: int | None = None  # None: SGLang's min(max(BLOCK // 256, 1), 8)


@triton.jit
def _round_half_away(x):  # type: ignore[no-untyped-def]
    return tl.where(x >= 0, tl.floor(x + 0.5), -tl.floor(-x + 0.5))


@contextlib.contextmanager
def _interpreter_round() -> Iterator[None]:
    """libdevice.round for the CPU interpreter only (it returns None for it)."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        yield
        return
    from triton.language.extra.cuda import libdevice

    original = libdevice.round
    libdevice.round = _round_half_away
    try:
        yield
    finally:
        libdevice.round = original


def prepare(
    cfg: Int8QuantConfig, x: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("sglang_int8_quant")
    if x.dim() != 2 or not x.is_contiguous():
        raise ValueError("x must be a contiguous [tokens, hidden] matrix (SGLang asserts it)")
    rows, hidden = x.shape
    block = triton.next_power_of_2(hidden)
    warps = cfg.num_warps or min(max(block // 256, 1), 8)
    x_q = torch.empty_like(x, dtype=torch.int8)
    scales = torch.empty((rows, 1), device=x.device, dtype=torch.float32)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        with _interpreter_round():
            handle = mod._per_token_quant_int8[(rows,)](
                x, x_q, scales, None, stride_x=x.stride(-2), stride_xq=x_q.stride(-2), N=hidden,
                CAL_SUM=False, BLOCK=block, num_warps=warps, num_stages=1,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_per_token_quant_int8"], block=block,
            num_warps=warps, programs=rows,
        )  # fmt: skip
        return x_q, scales

    return launch
