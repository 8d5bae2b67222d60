"""SGLang's per-token-group fp8 quantization (python/sglang/srt/layers/quantization/
fp8_kernel.py, v0.5.9: `_per_token_group_quant_8bit`), launched by our copy of SGLang's
`per_token_group_quant_fp8` (row-major scales, e4m3, no UE8M0) so that its launch choice is
a knob.

Block-wise fp8 serving (DeepSeek-V3-style 128 x 128 weight blocks) quantizes each
activation row in groups of `group` columns before the block fp8 GEMM: one program per
group loads its `group` values (BLOCK = next_pow2(group), masked) in fp32, takes the
absolute maximum (at least eps = 1e-10), and writes the group clamped to +-448 and cast to
e4m3 at scale absmax / 448, and that fp32 scale.  SGLang's choices: BLOCK =
next_pow2(group), num_warps = min(max(BLOCK // 256, 1), 8) (1 for 128-wide groups),
num_stages = 1.  Knob: `num_warps`, None keeping SGLang's.  The group is the quantization
format, not a tile; the kernel has no loop, so num_stages changes nothing and is no knob.

On CUDA SGLang 0.5.9 calls sgl_kernel's CUDA version of this quantization when it is
installed; this Triton kernel is its path without it (and SGLang's reference for it).
SGLang allocates the fp8 rows and the scales per call; here they are allocated in
`prepare`, outside the timed call.  Under the CPU interpreter (tests only) the fp32 -> e4m3
cast is done by torch (round to nearest even, as the GPU's cvt.rn does): Triton 3.6's
interpreter truncates it, and its rounding loses the carry into the exponent (124.97 became
64, not 128).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
FP8 = torch.float8_e4m3fn
EPS = 1e-10


@dataclass(frozen=True)
class Fp8GroupQuantConfig:
    num_warps: int | None = None  # None: SGLang's min(max(next_pow2(group) // 256, 1), 8)


@contextlib.contextmanager
def interpreter_fp8_cast() -> Iterator[None]:
    """fp32 -> e4m3 casts by torch under the CPU interpreter only (see the module notes)."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        yield
        return
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as itp

    original = itp._convert_float

    def convert(data: Any, src: Any, dst: Any, rounding_mode: Any) -> Any:
        if dst == tl.float8e4nv and src == tl.float32:
            t = torch.from_numpy(np.ascontiguousarray(data, dtype=np.float32))
            return t.to(FP8).view(torch.uint8).numpy().reshape(data.shape)
        return original(data, src, dst, rounding_mode)

    itp._convert_float = convert
    try:
        yield
    finally:
        itp._convert_float = original


def prepare(
    cfg: Fp8GroupQuantConfig, x: torch.Tensor, group: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("sglang_fp8_kernel")
    if x.dim() != 2 or not x.is_contiguous() or x.shape[-1] % group:
        raise ValueError(
            "x must be a contiguous [tokens, hidden] matrix, hidden a multiple of group"
        )
    rows, hidden = x.shape
    info = torch.finfo(FP8)
    block = triton.next_power_of_2(group)
    warps = cfg.num_warps or min(max(block // 256, 1), 8)
    x_q = torch.empty_like(x, dtype=FP8)
    scales = torch.empty((rows, hidden // group), device=x.device, dtype=torch.float32)
    programs = x.numel() // group

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        with interpreter_fp8_cast():
            handle = mod._per_token_group_quant_8bit[(programs,)](
                x, x_q, scales, group, group, EPS, bit8_min=info.min, bit8_max=info.max,
                BLOCK=block, num_warps=warps, num_stages=1,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_per_token_group_quant_8bit"],
            block=block, num_warps=warps, programs=programs,
        )  # fmt: skip
        return x_q, scales

    return launch
