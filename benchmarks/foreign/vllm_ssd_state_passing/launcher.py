"""vLLM's Mamba-2 state passing (vllm/model_executor/layers/mamba/ops/ssd_state_passing.py,
v0.34.0: `_state_passing_fwd_kernel`), launched as vLLM's `_state_passing_fwd` launches it
from `_mamba_chunk_scan_combined_fwd` (initial states from the SSM cache, each sequence's
final state written into its cache slot), so that its launch choices are knobs.

The grid is (cdiv(state_dim, BLOCK_SIZE), sequences, heads): each program keeps BLOCK_SIZE
state elements of one head in fp32, starts from the sequence's initial state and walks the
sequence's chunks in order, decaying the state by exp(dA_cumsum at the chunk's last
position) (exp2 on a scaled argument, vLLM's fast_exp), adding the chunk's own state and
storing the state entering the next chunk; the last is stored into the sequence's cache
slot.  The chunk loop is serial: two dependent loads and a store per step.

vLLM's launch: autotuned over BLOCK_SIZE 64 to 2048 (key: the state size) with Triton's
default 4 warps and 3 stages; `launch_autotuned` times the six on the first call and keeps
the winner.  The autotune decorator is dropped; `triton_v1` is the first config (64) with
the defaults.  Knobs: the block, the warps and the stages, None keeping those.  vLLM
allocates the output per call; here it is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_FIRST_BLOCK = 64  # the first of the autotune configs
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class StatePassingConfig:
    block_size: int | None = None  # None: the first autotune config, 64 state elements
    num_warps: int | None = None  # None: Triton's default 4 (the configs set none)
    num_stages: int | None = None  # None: Triton's default 3 (the configs set none)


def prepare(
    cfg: StatePassingConfig, states: torch.Tensor, da_cumsum: torch.Tensor,
    last_chunk_indices: torch.Tensor, initial_states: torch.Tensor,
    final_states: torch.Tensor, final_state_indices: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("vllm_ssd_state_passing")
    helper = _common.load_source("vllm_mamba_fast_exp")
    # The extracted kernel calls fast_exp (triton_helpers.py) by global name.
    mod.fast_exp = helper.fast_exp
    nchunks, heads, dim = states.shape
    chunk_size = da_cumsum.shape[-1]
    seqs = last_chunk_indices.shape[0]
    if da_cumsum.shape != (heads, nchunks, chunk_size):
        raise ValueError("da_cumsum must be [heads, chunks, chunk_size]")
    if initial_states.shape != (seqs, heads, dim) or final_states.shape[1:] != (heads, dim):
        raise ValueError("initial states [seqs, heads, dim], final states [slots, heads, dim]")
    block = cfg.block_size or VLLM_FIRST_BLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    out = torch.empty((nchunks, heads, dim), dtype=initial_states.dtype, device=states.device)
    grid = (triton.cdiv(dim, block), seqs, heads)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod._state_passing_fwd_kernel[grid](
            states, out, da_cumsum, initial_states, last_chunk_indices, final_states,
            final_state_indices, dim, chunk_size,
            states.stride(0), states.stride(1), states.stride(2),
            out.stride(0), out.stride(1), out.stride(2),
            da_cumsum.stride(0), da_cumsum.stride(1), da_cumsum.stride(2),
            initial_states.stride(0), initial_states.stride(1), initial_states.stride(2),
            final_states.stride(0), final_states.stride(1), final_states.stride(2),
            final_state_indices.stride(0),
            HAS_INITSTATES=True, HAS_FINAL_STATES=True, BLOCK_SIZE=block,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_state_passing_fwd_kernel"],
            block_size=block, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out, final_states

    return launch
