"""SGLang's chunked gated-delta state recurrence with SGLang's own launch: one program per
(32-column block of the state, sequence, value head), 4 warps, 2 stages, the chunk offsets,
h and v_new made outside the timed call, the pool updated in place."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_gdn_chunk_h.launcher import GdnChunkHConfig
from foreign.sglang_gdn_chunk_h.launcher import prepare as _prepare

CONFIG = GdnChunkHConfig(block_v=None, num_warps=None, num_stages=None)


def prepare(
    k: torch.Tensor, w: torch.Tensor, u: torch.Tensor, g: torch.Tensor, state: torch.Tensor,
    slots: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The chunk offsets and the outputs h and v_new, outside the timed call."""
    return _prepare(CONFIG, k, w, u, g, state, slots, cu_seqlens, chunk)


def chunk_h(
    k: torch.Tensor, w: torch.Tensor, u: torch.Tensor, g: torch.Tensor, state: torch.Tensor,
    slots: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(k, w, u, g, state, slots, cu_seqlens, chunk)()
