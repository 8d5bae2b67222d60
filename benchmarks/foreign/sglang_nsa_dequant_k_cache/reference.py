"""SGLang's NSA fp8 K-cache dequantization through a flat page table (the
`_dequantize_k_cache_paged_kernel` launch of `dequantize_k_cache_paged`, DeepSeek-V3.2 with
`--kv-cache-dtype fp8_e4m3`): inputs, reference, torch baseline.

The KV pool of one layer is [pool_tokens, 1, 656] float8_e4m3fn, one 656-byte record per
KV slot (FlashMLA's sparse fp8 layout): 512 e4m3 bytes of the compressed latent (kv_lora_rank
512), four fp32 scales (one per 128 latent columns) and the 64 bf16 columns of the rotary
key.  page_table_1_flattened is [tokens] int32: the slot of every token of every request of
an extend batch, request after request, its pages (page_size slots each) shuffled over the
pool, and a slot may come back (prefix sharing).  The output is [tokens, 1, 576] bf16
whatever the spec's dtype: each gathered record's latent times its scales, then its rotary
key."""

from __future__ import annotations

import torch

DIM_NOPE, DIM_ROPE, TILE = 512, 64, 128
RECORD = DIM_NOPE + 4 * (DIM_NOPE // TILE) + 2 * DIM_ROPE  # 656 bytes


def make_inputs(
    tokens: int,
    pool_tokens: int,
    page_size: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A pool of records quantized as SGLang's NSA quantizer writes them (each 128-column
    tile's absmax over 448 as its scale), and a page table of shuffled pages: token t of the
    batch sits on page perm[(t // page_size) % pages] at offset t % page_size."""
    del dtype
    if pool_tokens % page_size:
        raise ValueError("pool_tokens must be a whole number of pages")
    # drawn on the device (a 262,144-slot pool is 134 M values: minutes on a CPU)
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    shape = (pool_tokens, DIM_NOPE // TILE)
    mag = torch.rand(*shape, 1, generator=gen, device=device) * 4 + 0.1
    tiles = torch.randn(*shape, TILE, generator=gen, device=device) * mag
    scale = tiles.abs().amax(-1).clamp(min=1e-4) / 448.0
    q = (tiles / scale[..., None]).view(pool_tokens, DIM_NOPE).to(torch.float8_e4m3fn)
    del tiles, mag
    rope = torch.randn(pool_tokens, DIM_ROPE, generator=gen, device=device).to(torch.bfloat16)
    rec = torch.cat(
        [q.view(torch.uint8), scale.float().view(torch.uint8), rope.view(torch.uint8)], 1
    )
    assert rec.shape[1] == RECORD
    pages = pool_tokens // page_size
    perm = torch.randperm(pages, generator=gen, device=device)
    t = torch.arange(tokens, device=device)
    slots = perm[(t // page_size) % pages] * page_size + t % page_size
    cache = rec.view(torch.float8_e4m3fn).view(pool_tokens, 1, RECORD)
    return cache, slots.to(torch.int32)


def reference(cache: torch.Tensor, page_table: torch.Tensor) -> torch.Tensor:
    """Record by record from its bytes: the latent's e4m3 values times their tile's fp32
    scale in fp32, rounded once to bf16; the rotary key's bf16 copied."""
    raw = cache.view(-1, RECORD).view(torch.uint8)[page_table.long()]
    q = raw[:, :DIM_NOPE].contiguous().view(torch.float8_e4m3fn).float()
    s = raw[:, DIM_NOPE : DIM_NOPE + 16].contiguous().view(torch.float32)
    rope = raw[:, DIM_NOPE + 16 :].contiguous().view(torch.bfloat16)
    nope = (q.view(-1, DIM_NOPE // TILE, TILE) * s[..., None]).view(-1, DIM_NOPE)
    return torch.cat([nope.to(torch.bfloat16), rope], 1).unsqueeze(1)


def torch_dequant(cache: torch.Tensor, page_table: torch.Tensor) -> torch.Tensor:
    """SGLang's own torch version (`_dequantize_k_cache_ref`'s slicing) after an index_select
    of the records' bytes."""
    rec = cache.view(-1, RECORD).view(torch.uint8).index_select(0, page_table)
    nope = rec[:, :DIM_NOPE].view(torch.float8_e4m3fn).float()
    s = rec[:, DIM_NOPE : DIM_NOPE + 16].view(torch.float32)
    out = torch.empty(rec.shape[0], DIM_NOPE + DIM_ROPE, dtype=torch.bfloat16, device=rec.device)
    out[:, DIM_NOPE:] = rec[:, DIM_NOPE + 16 :].view(torch.bfloat16)
    out[:, :DIM_NOPE] = (nope.view(-1, DIM_NOPE // TILE, TILE) * s[..., None]).view(-1, DIM_NOPE)
    return out.unsqueeze(1)
