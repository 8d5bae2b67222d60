"""vLLM's GDN prefill initial-state gather
(vllm/model_executor/layers/mamba/ops/gather_initial_states.py, v0.34.0:
`_gather_initial_states_kernel`), launched as vLLM's `gather_initial_states` launches it for
`QwenGatedDeltaNetAttention`'s prefill (the chunked gated delta rule's initial states),
so that its launch choices are knobs.

The grid is (cdiv(row, BLOCK_SIZE), prefill sequences): each program loads its sequence's
has-initial-state flag and state slot, then copies BLOCK_SIZE values of the slot's
[v_heads, head_v, head_k] state row from the pool (row stride the pool's, int64 offsets)
into the sequence's row of a contiguous [sequences, v_heads, head_v, head_k] buffer, or
stores zeros when the sequence starts fresh (its loads masked off).  No loop: one masked
load and store per program.  On Hopper and later vLLM also passes launch_pdl (a
programmatic-dependent-launch wait and release at the top); the same here on a CUDA device
of compute capability 9 or more, off elsewhere.

vLLM's launch: BLOCK_SIZE = min(next_power_of_2(row), 1024), 8 warps, Triton's default 3
stages (vLLM passes none; nothing to pipeline).  Knobs: the block, the warps and the stages,
None keeping vLLM's.  vLLM's per-call output (torch.empty) is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_MAX_BLOCK = 1024
VLLM_WARPS = 8
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class InitialStatesConfig:
    block: int | None = None  # None: vLLM's min(next_power_of_2(row), 1024)
    num_warps: int | None = None  # None: vLLM's 8
    num_stages: int | None = None  # None: Triton's default 3 (vLLM passes none)


def vllm_pdl(device: torch.device) -> bool:
    """vLLM's `current_platform.is_arch_support_pdl()`: CUDA at compute capability 9+."""
    if device.type != "cuda":
        return False
    return torch.cuda.get_device_capability(device)[0] >= 9


def prepare(
    cfg: InitialStatesConfig, state: torch.Tensor, indices: torch.Tensor,
    has_initial_state: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_gdn_initial_states")
    if state.dim() < 2 or not state[0].is_contiguous():
        raise ValueError("state must be [slots, ...] with each slot's row contiguous")
    if indices.dim() != 1 or has_initial_state.shape != indices.shape:
        raise ValueError("indices and has_initial_state must be [sequences]")
    if has_initial_state.dtype != torch.bool:
        raise ValueError("has_initial_state must be bool")
    row = state[0].numel()
    out = torch.empty((indices.numel(), *state.shape[1:]), dtype=state.dtype, device=state.device)
    block = cfg.block or min(triton.next_power_of_2(row), VLLM_MAX_BLOCK)
    warps = cfg.num_warps or VLLM_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    pdl = vllm_pdl(state.device)
    grid = (triton.cdiv(row, block), indices.numel())

    def launch() -> torch.Tensor:
        handle = mod._gather_initial_states_kernel[grid](
            state, indices, has_initial_state, out, state.stride(0), indices.stride(0),
            has_initial_state.stride(0), row_size=row, BLOCK_SIZE=block, num_warps=warps,
            num_stages=stages, launch_pdl=pdl,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_gather_initial_states_kernel"],
            block=block, num_warps=warps, num_stages=stages, programs=grid[0] * grid[1],
            launch_pdl=pdl,
        )  # fmt: skip
        return out

    return launch
