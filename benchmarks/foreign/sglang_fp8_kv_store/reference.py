"""SGLang's fused FP8 KV-cache store (`fused_fp8_set_kv_buffer` with per-tensor k_scale and
v_scale, a 3-D [slots, kv heads, head_dim] float8_e4m3fn pool): inputs, reference, torch
baseline.

k and v are [tokens, kv heads, head_dim] in the spec's dtype; k_cache and v_cache the fp8
pools; cache_loc the int64 slot of each token (distinct slots); k_scale and v_scale fp32
0-d tensors (a checkpoint's per-layer KV scales); page_size the pool's tokens per page (it
only splits a slot into page and row, which lands on the same row of the 3-D pool).  The
outputs are the two pools with every token's row written as fp8(x / scale) and every other
row as it was (the kernel writes in place)."""

from __future__ import annotations

import torch

FP8 = torch.float8_e4m3fn


def make_inputs(
    tokens: int, heads: int, head_dim: int, page_size: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Keys and values of std 2, scales 0.05 and 0.04 (so a value reaches about 200 of
    e4m3's 448), a pool of twice the step's tokens rounded up to whole pages holding random
    fp8 rows (a stray write shows) and the step's slots a random choice of distinct pool
    rows (a paged allocator's scattered free list).  Drawn on the device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    slots = -(-2 * tokens // page_size) * page_size
    k = (2.0 * torch.randn(tokens, heads, head_dim, generator=gen, device=device)).to(dtype)
    v = (2.0 * torch.randn(tokens, heads, head_dim, generator=gen, device=device)).to(dtype)
    k_cache = (8.0 * torch.randn(slots, heads, head_dim, generator=gen, device=device)).to(FP8)
    v_cache = (8.0 * torch.randn(slots, heads, head_dim, generator=gen, device=device)).to(FP8)
    cache_loc = torch.randperm(slots, generator=gen, device=device)[:tokens].to(torch.int64)
    k_scale = torch.tensor(0.05, dtype=torch.float32, device=device)
    v_scale = torch.tensor(0.04, dtype=torch.float32, device=device)
    return k, v, k_cache, v_cache, cache_loc, k_scale, v_scale, page_size


def reference(
    k: torch.Tensor, v: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
    cache_loc: torch.Tensor, k_scale: torch.Tensor, v_scale: torch.Tensor, page_size: int,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Copies of the pools with each token's row set to fp8(fp32(x) * fp32(1 / scale))."""
    kc, vc = k_cache.clone(), v_cache.clone()
    inv_k = (1.0 / k_scale).to(torch.float32)
    inv_v = (1.0 / v_scale).to(torch.float32)
    kc[cache_loc] = (k.float() * inv_k).to(FP8)
    vc[cache_loc] = (v.float() * inv_v).to(FP8)
    return kc, vc


def torch_fp8_kv_store(
    k: torch.Tensor, v: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
    cache_loc: torch.Tensor, k_scale: torch.Tensor, v_scale: torch.Tensor, page_size: int,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same store by torch, as SGLang's naive fallback does it: scale and cast each of
    k and v to fp8, then one index_put per pool, in place."""
    k_cache[cache_loc] = (k.float() * (1.0 / k_scale)).to(FP8)
    v_cache[cache_loc] = (v.float() * (1.0 / v_scale)).to(FP8)
    return k_cache, v_cache
