"""SGLang's multi-layer EAGLE hidden-state pool store (python/sglang/srt/speculative/
multi_layer_eagle_utils.py, v0.5.9: `assign_hidden_states_pool_kernel`), launched as
SGLang's `assign_hidden_states_pool_triton` launches it, so that its launch choices are
knobs.

One program per request: it reads the request's extend length, start and pool slot, then,
for each of the `pool_size` rows it keeps, walks the hidden size in BLOCK_HID tiles (two
nested loops whose trip counts are constexprs), loading the row of the target's hidden
states and storing it into the request's slot of req_to_hidden_states_pool.

SGLang's launch: 64-column tiles (BLOCK_HID=64) with Triton's default 4 warps and 3
stages; HIDDEN_DIM and pool_size (speculative_num_steps - 1) are constexprs.  Knobs: the
tile, the warps and the stages, None keeping SGLang's.  Nothing is allocated: the kernel
writes into the pool, which SGLang allocates once with the worker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK_HID = 64
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class HiddenPoolConfig:
    block_hid: int | None = None  # None: SGLang's 64 columns per step
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: HiddenPoolConfig, hidden_states: torch.Tensor, req_pool_indices: torch.Tensor,
    req_to_hidden_states_pool: torch.Tensor, extend_seq_lens: torch.Tensor,
    extend_start_loc: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_eagle_hidden_pool")
    pool_table = req_to_hidden_states_pool
    if hidden_states.dim() != 2 or pool_table.dim() != 3:
        raise ValueError("hidden_states must be [tokens, hidden], the pool [slots, pool, hidden]")
    if pool_table.shape[2] != hidden_states.shape[1]:
        raise ValueError("the pool's last axis must be the hidden size")
    block = cfg.block_hid or SGLANG_BLOCK_HID
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    reqs = req_pool_indices.shape[0]
    grid = (reqs,)

    def launch() -> torch.Tensor:
        handle = mod.assign_hidden_states_pool_kernel[grid](
            hidden_states, req_pool_indices, pool_table, extend_seq_lens, extend_start_loc,
            hidden_states.stride(0), hidden_states.stride(1), pool_table.stride(0),
            pool_table.stride(1), pool_table.stride(2), HIDDEN_DIM=hidden_states.shape[1],
            pool_size=pool_table.shape[1], BLOCK_HID=block, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["assign_hidden_states_pool_kernel"],
            block_hid=block, num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return pool_table

    return launch
