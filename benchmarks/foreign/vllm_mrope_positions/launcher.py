"""vLLM's M-RoPE position preparation for the GPU model runner (vllm/v1/worker/gpu/mm/rope.py,
v0.34.0: `_prepare_rope_positions_kernel`), launched as `RopeState.prepare_positions`
launches it, so that its launch choices are knobs.

The grid is one program per request of the step.  Each program loads its request's slot
from the index mapping, the slot's prefill length, computed-token count and M-RoPE delta,
and its token range from the query start locations, then walks its tokens BLOCK_SIZE at a
time: for every position channel (3 for Qwen-VL's temporal, height and width), a request
still in prefill gathers its precomputed positions from the [slots x channels,
max_model_len] int32 table at the computed offset, a decoding one computes offset + token +
delta; both store int64 into the channel's row of the persistent [channels, max_tokens + 1]
positions buffer.

vLLM's launch: BLOCK_SIZE = 1024 (fixed in `prepare_positions`), Triton's default 4 warps and
3 stages (vLLM passes neither; the token loop's loads make the stages count).  Knobs: the
token block, the warps and the stages, None keeping vLLM's.  The positions buffer is the
runner's persistent one (written in place); vLLM keeps the prefill table in pinned host
memory read through UVA, here it is on the device.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK = 1024
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class MropePositionsConfig:
    block: int | None = None  # None: vLLM's 1024 tokens per loop step
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3 (vLLM passes none)


def prepare(
    cfg: MropePositionsConfig,
    positions: torch.Tensor,
    prefill_positions: torch.Tensor,
    prefill_delta: torch.Tensor,
    idx_mapping: torch.Tensor,
    query_start_loc: torch.Tensor,
    prefill_lens: torch.Tensor,
    num_computed_tokens: torch.Tensor,
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("vllm_mrope_positions")
    num_dims = positions.shape[0]
    max_model_len = prefill_positions.shape[1]
    if prefill_positions.shape[0] % num_dims or prefill_positions.stride(1) != 1:
        raise ValueError("prefill_positions must be a row-major [slots x dims, max_len] table")
    num_reqs = idx_mapping.shape[0]
    num_tokens = int(query_start_loc[-1].item())
    block = cfg.block or VLLM_BLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    grid = (num_reqs,)

    def launch() -> torch.Tensor:
        handle = mod._prepare_rope_positions_kernel[grid](
            positions, positions.stride(0), prefill_positions, num_dims * max_model_len,
            max_model_len, prefill_delta, idx_mapping, query_start_loc, prefill_lens,
            num_computed_tokens, BLOCK_SIZE=block, NUM_DIMS=num_dims,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_prepare_rope_positions_kernel"],
            block=block, num_warps=warps, num_stages=stages, programs=num_reqs,
        )  # fmt: skip
        return positions[:, :num_tokens]

    return launch
