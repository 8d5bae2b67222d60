"""vLLM's compressed-tensors quantized embedding lookup
(vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors_embedding.py,
v0.34.0: `_dequant_gather_kernel`), launched as vLLM's `_dequant_gather_triton` launches it,
so that its launch choices are knobs.

The grid is (tokens, column blocks).  Each program loads its token's id, gathers the
BLOCK columns' packed int32 words of that table row (each word loaded by the 32 / bits
lanes it holds), shifts and masks out each lane's value, takes off the 2^(bits - 1)
offset, loads the lane's group scale (or the row's one scale when the checkpoint is
channel-wise) and stores value x scale in the scale's dtype, masked past hidden.

vLLM's launch: BLOCK = min(next_power_of_2(hidden), 1024), Triton's default 4 warps (vLLM
passes none), PACK_FACTOR = 32 / bits, GROUP_SIZE = hidden / groups (0 for one scale per
row).  Knobs: the column block and the warps, None keeping vLLM's.  vLLM's per-call output
is made in `prepare`; its reshape of the output is free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_MAX_BLOCK = 1024
TRITON_DEFAULT_WARPS = 4


@dataclass(frozen=True)
class DequantGatherConfig:
    block: int | None = None  # None: vLLM's min(next_power_of_2(hidden), 1024)
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)


def vllm_block(hidden: int) -> int:
    return min(triton.next_power_of_2(hidden), VLLM_MAX_BLOCK)


def prepare(
    cfg: DequantGatherConfig, ids: torch.Tensor, weight_packed: torch.Tensor,
    weight_scale: torch.Tensor, hidden: int, bits: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_quant_embedding")
    if not ids.is_contiguous() or not weight_packed.is_contiguous():
        raise ValueError("ids and the packed table must be contiguous")
    if 32 % bits or weight_packed.shape[1] * (32 // bits) != hidden:
        raise ValueError("the packed table must hold hidden values per row, 32 / bits a word")
    block = cfg.block or vllm_block(hidden)
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    n = ids.numel()
    num_groups = weight_scale.shape[1]
    group_size = 0 if num_groups == 1 else hidden // num_groups
    out = torch.empty(n, hidden, dtype=weight_scale.dtype, device=weight_packed.device)
    grid = (n, triton.cdiv(hidden, block))

    def launch() -> torch.Tensor:
        handle = mod._dequant_gather_kernel[grid](
            ids, weight_packed, weight_scale, out, hidden, weight_packed.shape[1],
            num_groups, NUM_BITS=bits, PACK_FACTOR=32 // bits, GROUP_SIZE=group_size,
            BLOCK=block, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_dequant_gather_kernel"],
            block=block, num_warps=warps, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
