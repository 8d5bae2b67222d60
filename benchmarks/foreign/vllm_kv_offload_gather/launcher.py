"""vLLM's HF3FS KV connector gather
(vllm/distributed/kv_transfer/kv_connector/v1/hf3fs/utils/gather_scatter_helper.py,
v0.34.0: `kv_cache_gather_kernel`), launched as vLLM's `gather_kv_caches` launches it, so
that its launch choices are knobs.

The grid is (layers, tokens of the block).  Each program loads its layer's KV cache base
address from an int64 table of data pointers and casts it to a pointer of the staging
buffer's dtype, loads its token's index in the cache, splits it into block and slot, and
walks the layer's heads x content values in BLOCK_SIZE steps: head and column by a divide
and a modulo, the source addressed by the per-layer [blocks, heads, block_size, content]
view's strides, the destination at [layer, head, token, column] of a contiguous staging
buffer.

vLLM's launch: BLOCK_SIZE = 128 (fixed in `gather_kv_caches`), Triton's default 4 warps and
3 stages (vLLM passes neither; the loop's loads make the stages count).  Knobs: the value
block, the warps and the stages, None keeping vLLM's.  vLLM's per-call copy of the token
indices to the device (`async_tensor_h2d`) and its pointer table (built once at
registration) are made in `prepare`; the staging buffer is the connector's pooled one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK = 128
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class KvGatherConfig:
    block: int | None = None  # None: vLLM's 128 values per loop step
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3 (vLLM passes none)


def prepare(cfg: KvGatherConfig, caches: torch.Tensor, block_id: int) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("vllm_kv_offload_gather")
    if caches.dim() != 5:
        raise ValueError("caches must be [layers, blocks, heads, block_size, content]")
    layers, blocks, heads, block_size, content = caches.shape
    # the connector's registration: one int64 base address per layer, strides shared
    ptrs = torch.tensor(
        [caches[i].data_ptr() for i in range(layers)], dtype=torch.int64, device=caches.device
    )
    strides = caches[0].stride()
    start = block_id * block_size
    token_indices = torch.arange(
        start, start + block_size, dtype=torch.int32, device=caches.device
    )  # vLLM's per-call async_tensor_h2d of list(range(start, start + block_size))
    dst = torch.empty(layers, heads, block_size, content, dtype=caches.dtype, device=caches.device)
    block = cfg.block or VLLM_BLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    grid = (layers, block_size)

    def launch() -> torch.Tensor:
        handle = mod.kv_cache_gather_kernel[grid](
            ptrs, dst, token_indices, block_size, blocks * block_size, layers, block_size,
            *strides, num_heads=heads, content_size=content, BLOCK_SIZE=block,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["kv_cache_gather_kernel"],
            block=block, num_warps=warps, num_stages=stages, programs=grid[0] * grid[1],
            steps=triton.cdiv(heads * content, block),
        )  # fmt: skip
        return dst

    return launch
