"""SGLang's multimodal tensor hash (`gpu_tensor_hash`, the key of a multimodal item in the
prefix cache): inputs, reference, torch baseline.

pixels is [patches, width] in the spec's dtype: a vision-language model's flattened patch
values (Qwen2.5-VL: 3 channels x 2 frames x 14 x 14 = 1176 per patch), hashed as its raw
bytes read as 32-bit words.  seed is SGLang's default.  Each 8192-word tile gets two 32-bit
MurmurHash3-style hashes (every word mixed with its index and a seed, fmix32'd, the tile's
words summed, then the byte count xored in and fmix32'd again), packed into one uint64; the
tiles' values are summed modulo 2^64.  The output is that sum's eight bytes (uint8,
little-endian), so that the relative-error check sees a change in any bit; SGLang's
host-side splitmix64 of it is left out."""

from __future__ import annotations

import torch

SGLANG_SEED = 0x243F6A88  # gpu_tensor_hash's default seed
FMIX32_C1 = 0x85EBCA6B
FMIX32_C2 = 0xC2B2AE35
POS_C1 = 0x27D4EB2D
POS_C2 = 0x165667B1
M32 = 0xFFFFFFFF


def seeds(seed: int = SGLANG_SEED) -> tuple[int, int]:
    """gpu_tensor_hash's two 32-bit seeds."""
    return seed & M32, ((seed * 0x9E3779B1) ^ 0xDEADBEEF) & M32


def make_inputs(
    patches: int, width: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, int]:
    """Normalised pixel values (normal), and SGLang's seed."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    pixels = torch.randn(patches, width, generator=gen)
    return pixels.to(dtype=dtype, device=device), SGLANG_SEED


def words(t: torch.Tensor) -> torch.Tensor:
    """The tensor's bytes as 32-bit words (int64, 0 .. 2^32 - 1)."""
    raw = t.contiguous().view(torch.uint8).reshape(-1)
    if raw.numel() % 4:
        raw = torch.cat([raw, raw.new_zeros(4 - raw.numel() % 4)])
    return raw.view(torch.int32).long() & M32


def _fmix32(x: torch.Tensor) -> torch.Tensor:
    x = x ^ (x >> 16)
    x = (x * FMIX32_C1) & M32
    x = x ^ (x >> 13)
    x = (x * FMIX32_C2) & M32
    return x ^ (x >> 16)


def _rotl32(x: torch.Tensor, r: int) -> torch.Tensor:
    return ((x << r) | (x >> (32 - r))) & M32


def reference(pixels: torch.Tensor, seed: int, tile_words: int = 8192) -> torch.Tensor:
    """In int64 torch ops on the CPU (every 32-bit product masked back to 32 bits), the
    tile hashes' sum in Python integers modulo 2^64."""
    v = words(pixels.cpu())
    n = v.numel()
    s1, s2 = seeds(seed)
    idx = torch.arange(n, dtype=torch.int64)
    p1 = ((idx * POS_C1 + s1) & M32) ^ _rotl32(idx, 15)
    p2 = ((idx * POS_C2 + s2) & M32) ^ _rotl32(idx, 13)
    tiles = -(-n // tile_words)
    total = 0
    for k, p in ((1, p1), (2, p2)):
        mixed = _fmix32(v ^ p)
        padded = torch.zeros(tiles * tile_words, dtype=torch.int64)
        padded[:n] = mixed
        h = padded.view(tiles, tile_words).sum(dim=1) & M32
        h = _fmix32(h ^ ((n * 4) & M32))
        total += sum(int(x) for x in h.tolist()) << (32 if k == 1 else 0)
    total %= 2**64
    signed = total - 2**64 if total >= 2**63 else total
    return torch.tensor([signed], dtype=torch.int64, device=pixels.device).view(torch.uint8)


def torch_hash(pixels: torch.Tensor, seed: int) -> torch.Tensor:
    """The same hash by torch ops on the device (int64 with 32-bit masks; the tiles'
    uint64 sum split into two 32-bit halves so that nothing overflows)."""
    v = words(pixels)
    n = v.numel()
    s1, s2 = seeds(seed)
    idx = torch.arange(n, dtype=torch.int64, device=pixels.device)
    tile_words = 8192
    tiles = -(-n // tile_words)
    halves = []
    for pos_c, rot, s in ((POS_C1, 15, s1), (POS_C2, 13, s2)):
        p = ((idx * pos_c + s) & M32) ^ _rotl32(idx, rot)
        mixed = _fmix32(v ^ p)
        padded = torch.zeros(tiles * tile_words, dtype=torch.int64, device=pixels.device)
        padded[:n] = mixed
        h = padded.view(tiles, tile_words).sum(dim=1) & M32
        halves.append(_fmix32(h ^ ((n * 4) & M32)))
    lo = halves[1].sum()
    hi = (halves[0].sum() + (lo >> 32)) & M32
    combined = (hi << 32) | (lo & M32)  # wraps into the int64's sign bit as the kernel's
    return combined.reshape(1).view(torch.uint8)
