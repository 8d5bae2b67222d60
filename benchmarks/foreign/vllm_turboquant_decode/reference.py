"""vLLM's TurboQuant decode attention, MSE-key path (`triton_turboquant_decode_attention`:
`_tq_decode_stage1`, then the Triton decode attention's `_fwd_kernel_stage2`): inputs,
fp32 reference, torch baseline.

A decode step of `batch` requests, request b attending to its seq_lens[b] cached tokens
(the first request `ctx` long, the others between 3/4 of it and all of it).  The paged
cache is [pages, 16, kv_heads, slot] uint8 in vLLM's TurboQuant layout, each token and KV
head's slot holding from byte 0: the key's Lloyd-Max bucket indices (key_bits each,
packed little-endian), the key's norm as fp16 bytes, the value's uniform indices
(value_bits each, packed the same way), then the value's scale and zero as fp16 bytes.
Index bits are random bytes (every pattern is a valid index); norms, scales and zeros are
written as real fp16 values.  block_table [batch, pages of the longest] int32 lists each
request's pages, drawn from a permutation of the pool.  query is [batch, heads, head_dim]
in the spec's dtype; pit [head_dim, head_dim] fp32 the random orthogonal rotation's
transpose (vLLM's PiT); centroids [2^key_bits] fp32 the Lloyd-Max codebook of N(0, 1/D).
With norm correction (the `_nc` presets) each token's centroid vector is scaled to unit
norm before the product.  The output is [batch, heads, head_dim] in query's dtype:

    o[b, h] = softmax_i(norm_i * (q[b, h] @ PiT) . c_i / sqrt(D)) (idx_i * scale_i + zero_i)

over the tokens i of request b, c_i and the value of the head's KV head (h // group)."""

from __future__ import annotations

import math

import torch

PAGE = 16  # vLLM's default KV-cache block size
# Lloyd-Max centroids of the standard normal (the positive half), by bit width
LLOYD_MAX = {
    3: (0.2451, 0.7560, 1.3440, 2.1520),
    4: (0.1284, 0.3881, 0.6568, 0.9424, 1.2562, 1.6181, 2.0690, 2.7326),
}
NORM_CORRECTION = True  # vLLM's MSE-key presets (turboquant_k3v4_nc, _3bit_nc, _4bit_nc)


def layout(head_dim: int, key_bits: int, value_bits: int) -> dict[str, int]:
    """Byte offsets of a slot as vLLM's TurboQuantConfig sizes it."""
    mse = math.ceil(head_dim * key_bits / 8)
    kps = mse + 2
    vdata = math.ceil(head_dim * value_bits / 8)
    used = kps + vdata + 4
    return {"mse": mse, "kps": kps, "vdata": vdata, "slot": used + used % 2}


def seq_lens_of(batch: int, ctx: int) -> list[int]:
    """The first request `ctx` tokens long, request b shorter by (b * 997) % (ctx // 4)."""
    return [ctx - (b * 997) % max(ctx // 4, 1) for b in range(batch)]


def _fp16_bytes(x: torch.Tensor) -> torch.Tensor:
    bits = x.half().view(torch.int16).to(torch.int32) & 0xFFFF
    return torch.stack([bits & 255, bits >> 8], -1).to(torch.uint8)


def make_inputs(
    batch: int, ctx: int, heads: int, kv_heads: int, head_dim: int, key_bits: int,
    value_bits: int, *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor | int, ...]:  # fmt: skip
    """(query, kv_cache, block_table, seq_lens, pit, centroids, key_bits, value_bits); the
    cache drawn on the device (0.25 GB of bytes at 32 requests of 8K)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    lens = seq_lens_of(batch, ctx)
    pages = [(n + PAGE - 1) // PAGE for n in lens]
    pool = sum(pages) + 1
    lay = layout(head_dim, key_bits, value_bits)
    cache = torch.randint(
        0, 256, (pool, PAGE, kv_heads, lay["slot"]), generator=gen, device=device,
        dtype=torch.uint8,
    )  # fmt: skip
    shape = (pool, PAGE, kv_heads)
    # a normal key's norm (about sqrt(D)), a 4-sigma value range over the levels, its min
    norms = head_dim**0.5 * (1 + 0.1 * torch.randn(shape, generator=gen, device=device)).abs()
    levels = 2**value_bits - 1
    vscale = (8 + torch.randn(shape, generator=gen, device=device)).abs() / levels
    vzero = -4 + 0.5 * torch.randn(shape, generator=gen, device=device)
    cache[..., lay["mse"] : lay["kps"]] = _fp16_bytes(norms)
    v0 = lay["kps"] + lay["vdata"]
    cache[..., v0 : v0 + 2] = _fp16_bytes(vscale)
    cache[..., v0 + 2 : v0 + 4] = _fp16_bytes(vzero)
    perm = torch.randperm(pool, generator=gen, device=device).to(torch.int32)
    table = torch.zeros(batch, max(pages), dtype=torch.int32, device=device)
    start = 0
    for b, n in enumerate(pages):
        table[b, :n] = perm[start : start + n]
        start += n
    seq_lens = torch.tensor(lens, dtype=torch.int32, device=device)
    query = torch.randn(batch, heads, head_dim, generator=gen, device=device).to(dtype)
    pit, _ = torch.linalg.qr(torch.randn(head_dim, head_dim, generator=gen, device=device))
    half = torch.tensor(LLOYD_MAX[key_bits], device=device) / math.sqrt(head_dim)
    centroids = torch.cat([-half.flip(0), half]).float()
    return query, cache, table, seq_lens, pit.T.contiguous(), centroids, key_bits, value_bits


def _unpack(raw: torch.Tensor, bits: int, d: int) -> torch.Tensor:
    """[..., bytes] uint8 -> [..., d] indices as the kernel reads them (a 16-bit window)."""
    off = torch.arange(d, device=raw.device) * bits
    byte, shift = off // 8, off % 8
    r = torch.nn.functional.pad(raw.to(torch.int32), (0, 1))
    word = r[..., byte] | (r[..., byte + 1] << 8)
    return (word >> shift) & ((1 << bits) - 1)


def _fp16(raw: torch.Tensor) -> torch.Tensor:
    bits = raw[..., 0].to(torch.int32) | (raw[..., 1].to(torch.int32) << 8)
    return bits.to(torch.int16).view(torch.float16).float()


def _dequant(
    slots: torch.Tensor, centroids: torch.Tensor, d: int, key_bits: int, value_bits: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """[..., slot] uint8 -> (the rotated keys times their norms, the values), fp32."""
    lay = layout(d, key_bits, value_bits)
    c = centroids[_unpack(slots[..., : lay["mse"] + 1], key_bits, d)]
    if NORM_CORRECTION:
        c = c / torch.sqrt((c * c).sum(-1, keepdim=True) + 1e-16)
    k = c * _fp16(slots[..., lay["mse"] : lay["kps"]])[..., None]
    v0 = lay["kps"] + lay["vdata"]
    vi = _unpack(slots[..., lay["kps"] : v0 + 1], value_bits, d).float()
    v = (
        vi * _fp16(slots[..., v0 : v0 + 2])[..., None]
        + _fp16(slots[..., v0 + 2 : v0 + 4])[..., None]
    )
    return k, v


def reference(
    query: torch.Tensor, kv_cache: torch.Tensor, block_table: torch.Tensor,
    seq_lens: torch.Tensor, pit: torch.Tensor, centroids: torch.Tensor, key_bits: int,
    value_bits: int,
) -> torch.Tensor:  # fmt: skip
    """In fp32, request by request: its slots dequantized, softmax, weighted sum."""
    batch, heads, d = query.shape
    kv_heads = kv_cache.shape[2]
    q_rot = query.float() @ pit
    out = torch.empty(batch, heads, d, dtype=torch.float32, device=query.device)
    for b in range(batch):
        n = int(seq_lens[b])
        pages = block_table[b, : (n + PAGE - 1) // PAGE].long()
        slots = kv_cache[pages].reshape(-1, kv_heads, kv_cache.shape[-1])[:n]
        k, v = _dequant(slots.transpose(0, 1), centroids, d, key_bits, value_bits)
        qg = q_rot[b].view(kv_heads, heads // kv_heads, d)
        p = torch.softmax(qg @ k.transpose(1, 2) * d**-0.5, dim=-1)
        out[b] = (p @ v).reshape(heads, d)
    return out.to(query.dtype)


def torch_decode(
    query: torch.Tensor, kv_cache: torch.Tensor, block_table: torch.Tensor,
    seq_lens: torch.Tensor, pit: torch.Tensor, centroids: torch.Tensor, key_bits: int,
    value_bits: int,
) -> torch.Tensor:  # fmt: skip
    """The same by torch ops, batched: every request's pages gathered into a padded block,
    dequantized in fp32, then one masked scaled_dot_product_attention (GQA by grouping the
    query heads)."""
    batch, heads, d = query.shape
    kv_heads = kv_cache.shape[2]
    q_rot = (query.float() @ pit).view(batch, kv_heads, heads // kv_heads, d)
    slots = kv_cache[block_table.long()].reshape(batch, -1, kv_heads, kv_cache.shape[-1])
    k, v = _dequant(slots.transpose(1, 2), centroids, d, key_bits, value_bits)
    pos = torch.arange(slots.shape[1], device=query.device)
    mask = (pos[None, :] < seq_lens[:, None])[:, None, None, :]
    o = torch.nn.functional.scaled_dot_product_attention(q_rot, k, v, attn_mask=mask, scale=d**-0.5)
    return o.reshape(batch, heads, d).to(query.dtype)
