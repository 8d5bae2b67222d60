"""SGLang's all-layer KV-cache slot move with SGLang's own launch: the tile, chunk cap and warps
that `_init_kv_copy_and_warmup` picks from the row stride in bytes (128-byte tiles, chunks of
up to 256 slots and 4 warps below 4096 bytes; 256 bytes from 4096; 512 bytes, 128 slots and
8 warps from 8192), 2 stages (no autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_kv_move.launcher import KvMoveConfig
from foreign.sglang_kv_move.launcher import prepare as _prepare

CONFIG = KvMoveConfig(bytes_per_tile=None, locs_cap=None, num_warps=None)


def prepare(
    kv: torch.Tensor, tgt_loc: torch.Tensor, src_loc: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """The buffers' address and stride tables, outside the timed call."""
    return _prepare(CONFIG, kv, tgt_loc, src_loc)


def kv_move(kv: torch.Tensor, tgt_loc: torch.Tensor, src_loc: torch.Tensor) -> torch.Tensor:
    return prepare(kv, tgt_loc, src_loc)()
