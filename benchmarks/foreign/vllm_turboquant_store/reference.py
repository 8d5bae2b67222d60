"""vLLM's TurboQuant KV-cache store, MSE path (`_tq_fused_store_mse`): inputs, reference,
torch baseline.

The inputs are the kernel's: y [tokens * heads, D] fp32, each key divided by its norm and
rotated (x_hat @ PiT, PiT a random orthogonal D x D matrix); norms [tokens * heads] fp32;
values [tokens * heads, D] fp32; midpoints [2^key_bits - 1] fp32, the sorted boundaries of
the Lloyd-Max codebook of N(0, 1/D) (a rotated unit vector's coordinates); kv_cache
[blocks, 16, heads, slot] uint8, the paged cache (random bytes where nothing is stored);
slot_mapping [tokens] int32; the key and value bit widths.  Each token and head's slot
gets, from byte 0: the keys' bucket indices (the number of midpoints at or below each
coordinate) packed little-endian (two 4-bit ones per byte, or eight 3-bit ones per three
bytes), the norm as fp16 bytes, then the value's uniform indices round((v - min) / scale)
with scale (max - min) / (2^value_bits - 1) packed the same way, then scale and min as
fp16 bytes.  The output is the whole cache.
"""

from __future__ import annotations

import math

import torch

PAGE = 16  # vLLM's default KV-cache block size
# Lloyd-Max centroids of the standard normal (the positive half), by bit width
LLOYD_MAX = {
    2: (0.4528, 1.5104),
    3: (0.2451, 0.7560, 1.3440, 2.1520),
    4: (0.1284, 0.3881, 0.6568, 0.9424, 1.2562, 1.6181, 2.0690, 2.7326),
}


def slot_bytes(head_dim: int, key_bits: int, value_bits: int) -> tuple[int, int]:
    """(bytes written per slot, the slot's size rounded up to even, as vLLM sizes it)."""
    used = math.ceil(head_dim * key_bits / 8) + 2 + math.ceil(head_dim * value_bits / 8) + 4
    return used, used + used % 2


def make_inputs(
    tokens: int, kv_heads: int, head_dim: int, key_bits: int, value_bits: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor | int, ...]:  # fmt: skip
    """Normal keys and values in the dtype, turned into the kernel's inputs as vLLM's
    wrapper does (fp32 norms, unit keys rotated by a random orthogonal matrix, fp32
    values); slots shuffled over a pool of one more page than the tokens need."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    key = torch.randn(tokens * kv_heads, head_dim, generator=gen).to(dtype).float()
    value = torch.randn(tokens * kv_heads, head_dim, generator=gen).to(dtype).float()
    pit, _ = torch.linalg.qr(torch.randn(head_dim, head_dim, generator=gen))
    norms = key.norm(dim=1, keepdim=True)
    y = (key / (norms + 1e-8)) @ pit
    half = torch.tensor(LLOYD_MAX[key_bits]) / math.sqrt(head_dim)
    centroids = torch.cat([-half.flip(0), half])
    midpoints = ((centroids[1:] + centroids[:-1]) / 2).float()
    blocks = (tokens + PAGE - 1) // PAGE + 1
    _, slot = slot_bytes(head_dim, key_bits, value_bits)
    cache = torch.randint(0, 256, (blocks, PAGE, kv_heads, slot), generator=gen)
    slots = torch.randperm(blocks * PAGE, generator=gen)[:tokens].to(torch.int32)
    tensors = (y, norms.squeeze(1), value, midpoints, cache.to(torch.uint8), slots)
    return (*(t.contiguous().to(device) for t in tensors), key_bits, value_bits)


def _pack(idx: torch.Tensor, bits: int, nbytes: int) -> torch.Tensor:
    """[rows, D] indices -> [rows, nbytes] bytes, little-endian within each group."""
    rows, d = idx.shape
    if bits == 4:
        pairs = torch.nn.functional.pad(idx, (0, d % 2)).view(rows, -1, 2)
        out = pairs[..., 0] | (pairs[..., 1] << 4)
    else:
        groups = idx.view(rows, -1, 8)
        word = (groups << (3 * torch.arange(8, device=idx.device))).sum(-1)
        out = torch.stack([word & 255, (word >> 8) & 255, (word >> 16) & 255], -1).view(rows, -1)
    return out[:, :nbytes]


def _fp16_bytes(x: torch.Tensor) -> torch.Tensor:
    bits = x.half().view(torch.int16).to(torch.int64) & 0xFFFF
    return torch.stack([bits & 255, bits >> 8], -1)


def _store(
    y: torch.Tensor, norms: torch.Tensor, values: torch.Tensor, midpoints: torch.Tensor,
    kv_cache: torch.Tensor, slot_mapping: torch.Tensor, key_bits: int, value_bits: int,
) -> torch.Tensor:  # fmt: skip
    blocks, page, heads, slot = kv_cache.shape
    d = y.shape[1]
    idx = torch.searchsorted(midpoints, y, right=True).to(torch.int64)
    key = _pack(idx, key_bits, math.ceil(d * key_bits / 8))
    levels = 2**value_bits - 1
    vmin, vmax = values.min(dim=1).values, values.max(dim=1).values
    scale = (vmax - vmin) / float(levels)
    scale = torch.where(scale > 1e-8, scale, torch.full_like(scale, 1e-8))
    q = ((values - vmin[:, None]) / scale[:, None] + 0.5).to(torch.int64).clamp(0, levels)
    val = _pack(q, value_bits, math.ceil(d * value_bits / 8))
    rec = torch.cat([key, _fp16_bytes(norms), val, _fp16_bytes(scale), _fp16_bytes(vmin)], 1)
    out = kv_cache
    flat = out.view(blocks * page, heads, slot)
    rows = torch.arange(y.shape[0], device=y.device)
    tok_slot = slot_mapping.to(torch.int64).repeat_interleave(heads)
    keep = tok_slot >= 0
    flat[tok_slot[keep], (rows % heads)[keep], : rec.shape[1]] = rec[keep].to(torch.uint8)
    return out


def reference(
    y: torch.Tensor, norms: torch.Tensor, values: torch.Tensor, midpoints: torch.Tensor,
    kv_cache: torch.Tensor, slot_mapping: torch.Tensor, key_bits: int, value_bits: int,
) -> torch.Tensor:  # fmt: skip
    """On the CPU, the buckets by torch.searchsorted and the packing by integer ops."""
    cpu = [t.cpu() for t in (y, norms, values, midpoints, kv_cache.clone(), slot_mapping)]
    return _store(*cpu, key_bits, value_bits).to(kv_cache.device)


def torch_store(
    y: torch.Tensor, norms: torch.Tensor, values: torch.Tensor, midpoints: torch.Tensor,
    kv_cache: torch.Tensor, slot_mapping: torch.Tensor, key_bits: int, value_bits: int,
) -> torch.Tensor:  # fmt: skip
    """The same by torch ops on the inputs' device (searchsorted, integer packing, one
    indexed store into the cache, in place)."""
    return _store(y, norms, values, midpoints, kv_cache, slot_mapping, key_bits, value_bits)
