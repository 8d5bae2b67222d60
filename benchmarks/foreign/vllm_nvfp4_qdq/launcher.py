"""vLLM's NVFP4 activation quantize-dequantize (vllm/model_executor/layers/quantization/
utils/nvfp4_emulation_utils.py, v0.34.0: `_nvfp4_quant_dequant_kernel`), launched as vLLM's
`_triton_nvfp4_quant_dequant` launches it, so that its launch choices are knobs.

vLLM's NVFP4 emulation (the last-resort NVFP4 linear kernel, and the activation step of its
NVFP4 emulation MoE) rounds each activation row to NVFP4 and back before a bf16 matmul
against the dequantized weight.  A 2-D grid: one program per row and TILE_BLOCKS 16-element
groups.  Each program loads its [TILE_BLOCKS, 16] tile in fp32, takes each group's absolute
maximum, forms the group scale global_scale x amax / 6, clamps it to +-448 and rounds it
through e4m3 (the FP8 block scale NVFP4 stores), scales the group by global_scale / scale
(0 where the scale is 0), clamps to +-6, rounds each value to the nearest E2M1 value by
seven threshold compares (`_round_to_fp4`: halfway cases to the even code), and stores
value x scale / global_scale in the input's dtype.

vLLM's launch: TILE_BLOCKS = min(64, next_pow2(hidden / 16)), grid (rows, cdiv(hidden / 16,
TILE_BLOCKS)), no num_warps (Triton's 4) and no num_stages (the kernel has no loop, so
stages are no knob).  Knobs: the groups per program and the warps, None keeping vLLM's.
vLLM's per-call output is made in `prepare`.  Under the CPU interpreter (tests only) the
fp32 -> e4m3 cast of the scales is done by torch (round to nearest even, as the GPU's cvt.rn
does): Triton 3.6's interpreter truncates it (see foreign/sglang_fp8_group_quant).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from foreign.sglang_fp8_group_quant.launcher import interpreter_fp8_cast

LAST_INFO: dict[str, Any] = {}
GROUP = 16  # NVFP4's elements per block scale (the format, not a tile)
FP4_MAX_RECIPROCAL = 1.0 / 6.0  # vLLM's FLOAT4_E2M1_MAX_RECIPROCAL
MAX_TILE_BLOCKS = 64  # vLLM's cap on the groups per program


@dataclass(frozen=True)
class Nvfp4QdqConfig:
    tile_blocks: int | None = None  # None: min(64, next_pow2(hidden / 16)) groups per program
    num_warps: int | None = None  # None: Triton's 4 (vLLM passes none)


def prepare(
    cfg: Nvfp4QdqConfig, x: torch.Tensor, global_scale: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("vllm_nvfp4_qdq")
    if x.dim() != 2 or not x.is_contiguous() or x.shape[1] % GROUP:
        raise ValueError("x must be a contiguous [tokens, hidden] matrix, hidden a multiple of 16")
    rows, k = x.shape
    num_blocks = k // GROUP
    tile_blocks = cfg.tile_blocks or min(MAX_TILE_BLOCKS, triton.next_power_of_2(num_blocks))
    out = torch.empty(rows, k, dtype=x.dtype, device=x.device)
    grid = (rows, triton.cdiv(num_blocks, tile_blocks))
    warps = cfg.num_warps

    def launch() -> torch.Tensor:
        extra = {} if warps is None else {"num_warps": warps}
        with interpreter_fp8_cast():
            handle = mod._nvfp4_quant_dequant_kernel[grid](
                x, out, global_scale, k, num_blocks, GROUP, FP4_MAX_RECIPROCAL, tile_blocks,
                **extra,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_nvfp4_quant_dequant_kernel"],
            tile_blocks=tile_blocks, num_warps=warps or 4, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
