"""vLLM's KV-cache slot mapping with vLLM's own launch (TRITON_BLOCK_SIZE = 1024, fixed in
`BlockTables.compute_slot_mappings`; Triton's default 4 warps and 3 stages: it passes
neither, no autotuning); the block tables' layout tensors and the persistent slot mapping
made outside the timed call, as vLLM's BlockTables makes them once."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_slot_mapping.launcher import SlotMappingConfig
from foreign.vllm_slot_mapping.launcher import prepare as _prepare

# compute_slot_mappings' TRITON_BLOCK_SIZE=1024; no warps or stages passed
CONFIG = SlotMappingConfig(block_size=None, num_warps=None, num_stages=None)


def prepare(
    idx_mapping: torch.Tensor,
    query_start_loc: torch.Tensor,
    positions: torch.Tensor,
    block_tables: torch.Tensor,
    max_tokens: int,
) -> Callable[[], torch.Tensor]:
    """The layout tensors and the slot mapping, outside the timed call."""
    return _prepare(CONFIG, idx_mapping, query_start_loc, positions, block_tables, max_tokens)


def slot_mapping(
    idx_mapping: torch.Tensor,
    query_start_loc: torch.Tensor,
    positions: torch.Tensor,
    block_tables: torch.Tensor,
    max_tokens: int,
) -> torch.Tensor:
    return prepare(idx_mapping, query_start_loc, positions, block_tables, max_tokens)()
