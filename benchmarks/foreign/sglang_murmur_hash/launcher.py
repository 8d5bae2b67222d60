"""SGLang's seeded-sampling MurmurHash3 (python/sglang/srt/layers/utils/hash.py, v0.5.9:
`murmur_hash32_kernel` with its helpers `rotl32`, `fmix32` and `murmur3_mix`), launched as
SGLang's `murmur_hash32` launches it, so that its launch choices are knobs.

With per-request sampling seeds (deterministic inference), SGLang's sampler draws each
token through `multinomial_with_seed`: one 32-bit MurmurHash3 of (the request's 64-bit
seed, the token's position, the vocabulary column) per logit, turned into Gumbel noise by
torch.  One program per row and BLOCK_SIZE columns loads the row's seed and position once
and the block's column ids, mixes the four 32-bit words (seed low, seed high, position,
column) through MurmurHash3's multiply-rotate rounds, with its 32-bit products and
rotations done in 64-bit integers and masked back to 32 bits, finalises with fmix32 and
stores one uint32 per logit: no floating point, no reuse, a pure integer-ALU stream into
a write-only [rows, vocab] output.

SGLang's launch: BLOCK_SIZE 1024, Triton's default 4 warps (SGLang passes none).  Knobs:
the block and the warps, None keeping SGLang's; the kernel has no loop, so num_stages is no
knob.  The uint32 output, allocated by SGLang's wrapper on every call, is made in
`prepare`; the launch returns it viewed as int32 (the same bits, no copy), which kbopt's
check compares.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK = 1024
TRITON_DEFAULT_WARPS = 4


@dataclass(frozen=True)
class MurmurHashConfig:
    block_size: int | None = None  # None: SGLang's 1024
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)


def prepare(
    cfg: MurmurHashConfig, seed: torch.Tensor, positions: torch.Tensor, cols: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_murmur_hash")
    if seed.shape != positions.shape or seed.dim() != 1 or cols.dim() != 1:
        raise ValueError("seed and positions must be [rows], the column ids [vocab]")
    rows, vocab = seed.shape[0], cols.shape[0]
    block = cfg.block_size or SGLANG_BLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    out = torch.empty((rows, vocab), dtype=torch.uint32, device=seed.device)
    grid = (rows, -(-vocab // block))

    def launch() -> torch.Tensor:
        handle = mod.murmur_hash32_kernel[grid](
            seed, positions, cols, out, rows, vocab, BLOCK_SIZE=block, num_warps=warps
        )
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["murmur_hash32_kernel"],
            block_size=block, num_warps=warps, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out.view(torch.int32)

    return launch
