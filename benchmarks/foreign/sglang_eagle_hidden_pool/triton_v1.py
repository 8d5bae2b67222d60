"""SGLang's multi-layer EAGLE hidden-state pool store with SGLang's own launch: 64-column
tiles (BLOCK_HID=64 in assign_hidden_states_pool_triton), Triton's default 4 warps and 3
stages (SGLang passes neither; no heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_eagle_hidden_pool.launcher import HiddenPoolConfig
from foreign.sglang_eagle_hidden_pool.launcher import prepare as _prepare

CONFIG = HiddenPoolConfig(block_hid=None, num_warps=None, num_stages=None)


def prepare(
    hidden_states: torch.Tensor, req_pool_indices: torch.Tensor,
    req_to_hidden_states_pool: torch.Tensor, extend_seq_lens: torch.Tensor,
    extend_start_loc: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """Nothing to allocate: the kernel writes into the pool."""
    return _prepare(
        CONFIG, hidden_states, req_pool_indices, req_to_hidden_states_pool, extend_seq_lens,
        extend_start_loc,
    )  # fmt: skip


def assign_hidden_pool(
    hidden_states: torch.Tensor, req_pool_indices: torch.Tensor,
    req_to_hidden_states_pool: torch.Tensor, extend_seq_lens: torch.Tensor,
    extend_start_loc: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    return prepare(
        hidden_states,
        req_pool_indices,
        req_to_hidden_states_pool,
        extend_seq_lens,
        extend_start_loc,
    )()
