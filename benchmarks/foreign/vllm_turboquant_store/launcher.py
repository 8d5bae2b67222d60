"""vLLM's TurboQuant KV-cache store, MSE path (vllm/v1/attention/ops/
triton_turboquant_store.py, v0.34.0: `_tq_fused_store_mse` with `_store_quantized_value`),
launched as vLLM's `triton_turboquant_store` launches it for MSE-quantized keys, so that
its launch choices are knobs.

One program per token and KV head.  It reads the token's slot (skipping a negative one),
the head's rotated unit key (fp32, D values) and buckets each coordinate against the
Lloyd-Max codebook's sorted midpoints by a MSE_BITS-step binary search (one gathered
midpoint per lane and step), packs the bucket indices (two 4-bit or eight 3-bit ones per
two or three bytes), stores them, the key's norm as two fp16 bytes, then quantizes the
value row uniformly between its minimum and maximum (4 or 3 bits), packs it and stores it
with its fp16 scale and zero, all as bytes of the head's slot in the paged uint8 cache.

vLLM's launch: grid (tokens x heads,), BLOCK_D the next power of two of the head size,
num_warps 4, num_stages 1.  Knobs: the warps and the stages, None keeping vLLM's.  Before
the kernel vLLM's wrapper normalizes the keys, rotates them by cuBLAS (x_hat @ PiT) and
casts the values to fp32 in torch; those inputs are the spec's (made with the other
inputs), so the timed call is the one fused kernel.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM = {"num_warps": 4, "num_stages": 1}


@dataclass(frozen=True)
class TurboQuantStoreConfig:
    num_warps: int | None = None  # None: vLLM's 4
    num_stages: int | None = None  # None: vLLM's 1


def prepare(
    cfg: TurboQuantStoreConfig, y: torch.Tensor, norms: torch.Tensor, values: torch.Tensor,
    midpoints: torch.Tensor, kv_cache: torch.Tensor, slot_mapping: torch.Tensor,
    key_bits: int, value_bits: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_turboquant_store")
    n = slot_mapping.shape[0]
    h = kv_cache.shape[2]
    d = y.shape[-1]
    if y.shape[0] != n * h:
        raise ValueError("y must hold one row per token and KV head")
    block_size = kv_cache.shape[1]
    block_d = triton.next_power_of_2(d)
    mse_bytes = math.ceil(d * key_bits / 8)
    key_packed_size = mse_bytes + 2
    val_data_bytes = math.ceil(d * value_bits / 8)
    block_val = triton.next_power_of_2(val_data_bytes)
    block_grp = triton.next_power_of_2(d // 8) if d >= 8 else 1
    warps = cfg.num_warps or VLLM["num_warps"]
    stages = cfg.num_stages or VLLM["num_stages"]
    grid = (n * h,)

    def launch() -> torch.Tensor:
        handle = mod._tq_fused_store_mse[grid](
            y, norms, values, midpoints, kv_cache, slot_mapping,
            stride_cache_block=kv_cache.stride(0), stride_cache_pos=kv_cache.stride(1),
            stride_cache_head=kv_cache.stride(2), D=d, H=h, BLOCK_SIZE=block_size,
            BLOCK_D=block_d, MSE_BYTES=mse_bytes, KPS=key_packed_size, VQB=value_bits,
            VAL_DATA_BYTES=val_data_bytes, BLOCK_VAL=block_val, MSE_BITS=key_bits,
            N_CENTROIDS=2**key_bits, BLOCK_GRP=block_grp, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_tq_fused_store_mse"],
            num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return kv_cache

    return launch
