"""SGLang's AWQ int4 weight dequantization (python/sglang/srt/layers/quantization/
awq_triton.py, v0.5.9: `awq_dequantize_kernel`), launched as SGLang's `awq_dequantize_triton`
launches it, so that its launch choices are knobs.

SGLang's AWQ path on ROCm (AWQLinearMethod.apply, and DeepSeek's AWQ kv_b weights through
deepseek_common's awq_dequantize_func) dequantizes the whole layer's weight on every call
and hands it to torch.matmul.  The grid is (ceil(n / 8 / BLOCK_SIZE_X), ceil(k /
BLOCK_SIZE_Y)): one program per BLOCK_SIZE_Y rows and BLOCK_SIZE_X packed int32 columns
loads its words, spreads each over eight columns (three tl.interleave), shifts and masks out
the nibbles in AWQ's reversed order, does the same to one row of packed zero points, loads
one row of scales, and stores (q - z) * s, a [BLOCK_SIZE_Y, 8 BLOCK_SIZE_X] tile, in the
scales' dtype.  The zero points and scales are read for the tile's first row only, so a tile
must not cross a quantization group: BLOCK_SIZE_Y has to divide the group.

SGLang's launch: BLOCK_SIZE_X = BLOCK_SIZE_Y = 32 (the defaults of awq_dequantize_triton,
which AWQLinearMethod does not override), Triton's default 4 warps (it passes none; there is
no loop, so the stages play no part).  Knobs: the two tiles and the warps, None keeping
SGLang's.  The output is allocated once in `prepare` (SGLang allocates it with torch.empty
per call); every element is written by every launch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK_X = 32
SGLANG_BLOCK_Y = 32
TRITON_DEFAULT_WARPS = 4


@dataclass(frozen=True)
class AwqDequantConfig:
    block_x: int | None = None  # None: SGLang's 32 packed columns (256 output columns)
    block_y: int | None = None  # None: SGLang's 32 rows
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)


def prepare(
    cfg: AwqDequantConfig, qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_awq_dequant")
    k, packed = qweight.shape
    n = packed * 8
    group = k // scales.shape[0]
    if scales.shape != (k // group, n) or qzeros.shape != (k // group, packed) or k % group:
        raise ValueError("qweight [K, N/8], scales [K/G, N] and qzeros [K/G, N/8] must agree")
    bx = cfg.block_x or SGLANG_BLOCK_X
    by = cfg.block_y or SGLANG_BLOCK_Y
    if group % by:
        raise ValueError("block_y must divide the group size (one row of zeros per tile)")
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    out = torch.empty(k, n, dtype=scales.dtype, device=qweight.device)
    grid = (triton.cdiv(packed, bx), triton.cdiv(k, by))

    def launch() -> torch.Tensor:
        handle = mod.awq_dequantize_kernel[grid](
            qweight, scales, qzeros, group, out, packed, k,
            BLOCK_SIZE_X=bx, BLOCK_SIZE_Y=by, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["awq_dequantize_kernel"],
            block_x=bx, block_y=by, num_warps=warps, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
