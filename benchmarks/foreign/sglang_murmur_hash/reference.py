"""SGLang's seeded-sampling MurmurHash3 (`murmur_hash32`, called by `multinomial_with_seed`
when requests carry sampling seeds): inputs, reference, torch baseline.

seed [rows] (uint64, each request's sampling seed, as SGLang passes it), positions [rows]
(int64, each sampled token's position) and the column ids [vocab] (int64, torch.arange, as
SGLang makes them).  The output is [rows, vocab]: for each logit the 32-bit MurmurHash3
(x86_32, hash seed 0) of the 16 little-endian bytes (seed's low word, seed's high word,
position, column), as int32 bits."""

from __future__ import annotations

import torch

M32 = 0xFFFFFFFF
C1, C2 = 0xCC9E2D51, 0x1B873593


def make_inputs(
    rows: int, vocab: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random 64-bit seeds (high words set), positions of a decode batch (prompts of up
    to 32k tokens), the vocabulary's column ids; integers whatever the dtype."""
    del dtype
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    seeds = torch.randint(0, 2**62, (rows,), generator=gen, dtype=torch.int64) * 2 + 1
    positions = torch.randint(0, 32768, (rows,), generator=gen, dtype=torch.int64)
    cols = torch.arange(vocab, dtype=torch.int64)
    return seeds.to(torch.uint64).to(device), positions.to(device), cols.to(device)


def _rotl(x: torch.Tensor, r: int) -> torch.Tensor:
    return ((x << r) | (x >> (32 - r))) & M32


def _mul32(x: torch.Tensor, c: int) -> torch.Tensor:
    """The low 32 bits of a product (an int64 product that wraps keeps them)."""
    return (x * c) & M32


def _mix(h: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    k = _rotl(_mul32(k, C1), 15)
    k = _mul32(k, C2)
    h = _rotl(h ^ k, 13)
    return (h * 5 + 0xE6546B64) & M32


def _murmur(seed: torch.Tensor, positions: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    """MurmurHash3 x86_32 in int64 torch ops, every word kept below 2^32 by a mask."""
    s = seed.to(torch.int64)  # the bits, as a signed 64-bit word
    lo = (s & M32)[:, None]
    hi = ((s >> 32) & M32)[:, None]
    pos = (positions.to(torch.int64) & M32)[:, None]
    col = (cols.to(torch.int64) & M32)[None, :]
    h = torch.zeros((seed.shape[0], 1), dtype=torch.int64, device=seed.device)
    for k in (lo, hi, pos, col):
        h = _mix(h, k)
    h = h ^ 16
    h = h ^ (h >> 16)
    h = _mul32(h, 0x85EBCA6B)
    h = h ^ (h >> 13)
    h = _mul32(h, 0xC2B2AE35)
    h = h ^ (h >> 16)
    h = torch.where(h >= 2**31, h - 2**32, h)
    return h.to(torch.int32)


def reference(seed: torch.Tensor, positions: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    return _murmur(seed, positions, cols)


def torch_murmur_hash(
    seed: torch.Tensor, positions: torch.Tensor, cols: torch.Tensor
) -> torch.Tensor:
    """The same hash in torch's int64 element-wise kernels on the device."""
    return _murmur(seed, positions, cols)
