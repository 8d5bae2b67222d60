"""vLLM's paged KV-cache store (vllm/v1/attention/ops/triton_reshape_and_cache_flash.py,
v0.34.0: `reshape_and_cache_kernel_flash`), launched as vLLM's
`triton_reshape_and_cache_flash` launches it for a bf16 or fp16 cache in the flash layout
([blocks, block_size, kv heads, head size], no fp8, no head-major layout) so that its
launch choices are knobs.

Before the attention of every layer at every step, vLLM's Triton attention backend writes
the step's new keys and values into the paged KV cache: token t goes to slot
slot_mapping[t], that is block slot // block_size, row slot % block_size (a negative slot is
a padding token and is skipped).  One program per (token, TILE_SIZE elements of its
kv heads x head size row) loads the key and value tiles and stores them at the slot's
address; no arithmetic.

vLLM's choice on CUDA (a heuristic instead of autotuning): TILE_SIZE = the row's width
rounded up to a power of two, at most 2048 (at most 512 below compute capability 9, not
asked here: the H200 and the CPU interpreter take the 2048 bound), 16 warps, 10 stages.
Knobs: `tile_size`, `num_warps`, `num_stages`, None keeping vLLM's.  The fp32 k_scale and
v_scale tensors the kernel takes (read only for an fp8 cache) are made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_MAX_TILE = 2048
VLLM_WARPS = 16
VLLM_STAGES = 10


@dataclass(frozen=True)
class ReshapeAndCacheConfig:
    tile_size: int | None = None  # None: vLLM's next power of two of the row, at most 2048
    num_warps: int | None = None  # None: vLLM's 16
    num_stages: int | None = None  # None: vLLM's 10


def prepare(
    cfg: ReshapeAndCacheConfig, key: torch.Tensor, value: torch.Tensor,
    key_cache: torch.Tensor, value_cache: torch.Tensor, slot_mapping: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("vllm_reshape_and_cache")
    _, heads, head_size = key.shape
    if key_cache.dim() != 4 or key_cache.shape[2:] != (heads, head_size):
        raise ValueError("the caches must be [blocks, block_size, kv heads, head size]")
    if value.shape != key.shape or value_cache.shape != key_cache.shape:
        raise ValueError("key and value (and their caches) must have the same shapes")
    n = heads * head_size
    tile = cfg.tile_size or min(VLLM_MAX_TILE, triton.next_power_of_2(n))
    warps = cfg.num_warps or VLLM_WARPS
    stages = cfg.num_stages or VLLM_STAGES
    scale = torch.ones(1, dtype=torch.float32, device=key.device)
    grid = (slot_mapping.shape[0], triton.cdiv(n, tile))

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod.reshape_and_cache_kernel_flash[grid](
            key_ptr=key, value_ptr=value, key_cache_ptr=key_cache, value_cache_ptr=value_cache,
            slot_mapping_ptr=slot_mapping, k_scale=scale, v_scale=scale,
            key_stride=key.stride(0), value_stride=value.stride(0),
            block_stride=key_cache.stride(0), head_stride=key_cache.stride(2),
            dim_stride_k=0, dim_stride_v=0, page_stride=key_cache.stride(1),
            num_heads=heads, head_size=head_size, block_size=key_cache.shape[1], x=1,
            USE_HEAD_MAJOR_LAYOUT=False, INTERLEAVED_V_PACK_FACTOR=0, FP8_KV_CACHE=False,
            TILE_SIZE=tile, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["reshape_and_cache_kernel_flash"],
            tile_size=tile, num_warps=warps, num_stages=stages, programs=grid[0] * grid[1],
        )  # fmt: skip
        return key_cache, value_cache

    return launch
