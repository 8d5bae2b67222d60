"""vLLM's Mamba-2 chunk scan with vLLM's own configuration: the first of its autotune
configurations, which its sm90 filter keeps (32 x 32 output tiles, 32-token causal steps,
8 warps, 2 stages); the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_ssd_chunk_scan.launcher import ChunkScanConfig
from foreign.vllm_ssd_chunk_scan.launcher import prepare as _prepare

# ssd_chunk_scan.py's @triton.autotune list, first entry: BLOCK_SIZE_M 32, BLOCK_SIZE_N 32,
# BLOCK_SIZE_K 32, num_stages 2, num_warps 8 (BLOCK_SIZE_M 32 is no multiple of 64, so
# `_drop_racy_wgmma_configs` keeps it on sm90).  vLLM's launch_autotuned times the 12 that sm90 keeps on
# the first call; the decorator is dropped here and triton_v1 takes the first.
CONFIG = ChunkScanConfig(block_m=None, block_n=None, block_k=None, num_warps=None, num_stages=None)


def prepare(
    cb: torch.Tensor, x: torch.Tensor, dt: torch.Tensor, da_cumsum: torch.Tensor,
    C: torch.Tensor, states: torch.Tensor, cu_chunk_seqlens: torch.Tensor,
    seq_idx: torch.Tensor, D: torch.Tensor, initial_states: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The output, outside the timed call."""
    return _prepare(
        CONFIG, cb, x, dt, da_cumsum, C, states, cu_chunk_seqlens, seq_idx, D,
        initial_states,
    )  # fmt: skip


def chunk_scan(
    cb: torch.Tensor, x: torch.Tensor, dt: torch.Tensor, da_cumsum: torch.Tensor,
    C: torch.Tensor, states: torch.Tensor, cu_chunk_seqlens: torch.Tensor,
    seq_idx: torch.Tensor, D: torch.Tensor, initial_states: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    return prepare(cb, x, dt, da_cumsum, C, states, cu_chunk_seqlens, seq_idx, D, initial_states)()
