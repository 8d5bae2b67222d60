"""SGLang's fused FP8 KV-cache store (python/sglang/srt/layers/attention/triton_ops/
trtllm_fp8_kv_kernel.py, v0.5.9: `_fused_fp8_set_kv_buffer_kernel` with its helper
`_process_kv_tensor`), launched as SGLang's `fused_fp8_set_kv_buffer` launches it for the
TRT-LLM MHA backend with an fp8_e4m3 KV cache, so that its launch choices are knobs.

Before the attention of every layer at every step, the TRT-LLM MHA backend (SGLang's
attention backend on Blackwell, `--kv-cache-dtype fp8_e4m3`) writes the step's post-RoPE
keys and values into the fp8 token pool: token t goes to slot cache_loc[t], that is page
slot // page_size, row slot % page_size of the [slots, kv heads, head_dim] pool.  One
program per (token, BLOCK_HEAD kv heads, K or V) loops over the head dimension in BLOCK_DIM
steps: a [BLOCK_HEAD, BLOCK_DIM] tile loaded, multiplied by the layer's inverse per-tensor
scale (1 / k_scale or 1 / v_scale, an fp32 0-d tensor read once per program), cast to
float8e4nv and stored at the slot's row.

SGLang's launch: BLOCK_HEAD = min(kv heads, 8), BLOCK_DIM = min(head_dim, 128), Triton's
default 4 warps and 3 stages (SGLang passes neither).  Knobs: `block_head`, `block_dim`,
`num_warps`, `num_stages`, None keeping SGLang's.  The inverse scales (SGLang's per-call
1 / scale on the GPU) are made in `prepare`; the caches are written in place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_MAX_BLOCK_HEAD = 8
SGLANG_MAX_BLOCK_DIM = 128
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class Fp8KvStoreConfig:
    block_head: int | None = None  # None: SGLang's min(kv heads, 8)
    block_dim: int | None = None  # None: SGLang's min(head_dim, 128)
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: Fp8KvStoreConfig, k: torch.Tensor, v: torch.Tensor, k_cache: torch.Tensor,
    v_cache: torch.Tensor, cache_loc: torch.Tensor, k_scale: torch.Tensor,
    v_scale: torch.Tensor, page_size: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("sglang_fp8_kv_store")
    tokens, heads, head_dim = k.shape
    if k_cache.dim() != 3 or k_cache.shape[1:] != (heads, head_dim):
        raise ValueError("the caches must be [slots, kv heads, head_dim]")
    if v.shape != k.shape or v_cache.shape != k_cache.shape:
        raise ValueError("k and v (and their caches) must have the same shapes")
    if k_cache.shape[0] % page_size:
        raise ValueError("the pool's slots must be a multiple of page_size")
    block_head = cfg.block_head or min(heads, SGLANG_MAX_BLOCK_HEAD)
    block_dim = cfg.block_dim or min(head_dim, SGLANG_MAX_BLOCK_DIM)
    for name, val in (("block_head", block_head), ("block_dim", block_dim)):
        if val & (val - 1):
            raise ValueError(
                f"{name} must be a power of two (a tl.arange length; SGLang's own "
                "min(kv heads, 8) and min(head_dim, 128) assume real models' sizes)"
            )
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    inv_k = (1.0 / k_scale).to(torch.float32)
    inv_v = (1.0 / v_scale).to(torch.float32)
    grid = (tokens, triton.cdiv(heads, block_head), 2)
    kcs, vcs = k_cache.stride(), v_cache.stride()

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod._fused_fp8_set_kv_buffer_kernel[grid](
            k, v, k_cache, v_cache, cache_loc, inv_k, inv_v, True, heads, head_dim,
            page_size, k.stride(0), k.stride(1), k.stride(2),
            kcs[0] * page_size, kcs[0], kcs[1], kcs[2],
            v.stride(0), v.stride(1), v.stride(2),
            vcs[0] * page_size, vcs[0], vcs[1], vcs[2],
            BLOCK_HEAD=block_head, BLOCK_DIM=block_dim, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fused_fp8_set_kv_buffer_kernel"],
            block_head=block_head, block_dim=block_dim, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return k_cache, v_cache

    return launch
