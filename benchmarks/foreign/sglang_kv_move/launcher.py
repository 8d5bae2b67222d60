"""SGLang's all-layer KV-cache slot move (python/sglang/srt/mem_cache/memory_pool.py, v0.5.9:
`copy_all_layer_kv_cache_tiled`), launched as SGLang's `MHATokenToKVPool.move_kv_cache`
launches it, so that its launch choices are knobs.

One program per KV buffer (2 x layers, through a device table of their uint64 addresses
and row strides in bytes) and BYTES_PER_TILE bytes of a row: it casts the buffer's address
to a uint8 pointer, loads the whole chunk's source and target slots (a num_locs_upper-wide
masked load of each), gathers a [num_locs_upper, BYTES_PER_TILE] byte tile from the source
rows and stores it to the target rows.  Every load precedes every store, so a move within
one launch is safe in place.  The moved rows (locs x row bytes x 2 x layers) are the work;
the tile lives in registers (no loop).

SGLang's launch, set once per pool by `_init_kv_copy_and_warmup` from the row stride in
bytes: 512-byte tiles at 8192 or more (8 warps, chunks of up to 128 slots), 256 at 4096 or
more (4 warps, 256 slots), else 128 (4 warps, 256 slots); 2 stages; grid (2 x layers,
cdiv(row bytes, tile)); the slots in chunks of the cap, one launch each, num_locs_upper the
next power of two of the chunk.  Knobs: the tile, the chunk cap and the warps, None keeping
SGLang's; the stages are no knob (no loop), and a tile of more than 256 bytes per thread
(num_locs_upper x BYTES_PER_TILE over the warps' threads) is refused (see MAX_PER_THREAD).
The address and stride tables, built once per pool by SGLang, are made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_STAGES = 2
# bytes of the gathered tile per thread above which the launcher refuses (see the README)
MAX_PER_THREAD = 256


def _next_pow2(x: int) -> int:
    return 1 << max(0, x - 1).bit_length()


def sglang_config(stride_bytes: int) -> tuple[int, int, int]:
    """(bytes per tile, chunk cap, warps) as `_init_kv_copy_and_warmup` picks them."""
    if stride_bytes >= 8192:
        tile = 512
    elif stride_bytes >= 4096:
        tile = 256
    else:
        tile = 128
    return tile, 128 if tile >= 512 else 256, 4 if tile <= 256 else 8


@dataclass(frozen=True)
class KvMoveConfig:
    bytes_per_tile: int | None = None  # None: SGLang's choice for the row stride
    locs_cap: int | None = None  # None: SGLang's chunk cap (256, or 128 with 512-byte tiles)
    num_warps: int | None = None  # None: SGLang's 4 (8 with 512-byte tiles)


def prepare(
    cfg: KvMoveConfig, kv: torch.Tensor, tgt_loc: torch.Tensor, src_loc: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_kv_move")
    kernel = mod.copy_all_layer_kv_cache_tiled
    layers = kv.shape[1]
    stride_bytes = kv.shape[3] * kv.element_size()
    tile0, cap0, warps0 = sglang_config(stride_bytes)
    tile = cfg.bytes_per_tile or tile0
    cap = cfg.locs_cap or cap0
    warps = cfg.num_warps or warps0
    n = tgt_loc.numel()
    widest = _next_pow2(min(n, cap))
    if widest * tile > MAX_PER_THREAD * 32 * warps:
        raise ValueError(
            f"{widest} slots x {tile} bytes over {warps} warps is more than "
            f"{MAX_PER_THREAD} bytes per thread"
        )
    buffers = [kv[0, i] for i in range(layers)] + [kv[1, i] for i in range(layers)]
    data_ptrs = torch.tensor([b.data_ptr() for b in buffers], dtype=torch.uint64, device=kv.device)
    strides = torch.tensor([stride_bytes] * len(buffers), dtype=torch.int64, device=kv.device)
    grid = (len(buffers), -(-stride_bytes // tile))
    chunks = [(s, min(s + cap, n)) for s in range(0, n, cap)]

    def launch() -> torch.Tensor:
        handle = None
        for start, end in chunks:
            handle = kernel[grid](
                data_ptrs, strides, tgt_loc[start:end], src_loc[start:end], end - start,
                _next_pow2(end - start), BYTES_PER_TILE=tile, num_warps=warps,
                num_stages=SGLANG_STAGES,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=len(chunks),
            kernel_names=["copy_all_layer_kv_cache_tiled"] * len(chunks),
            bytes_per_tile=tile, locs_cap=cap, num_warps=warps, num_stages=SGLANG_STAGES,
            programs=grid[0] * grid[1] * len(chunks),
        )  # fmt: skip
        return kv

    return launch
