"""vLLM's lightning attention decode step (vllm/model_executor/layers/lightning_attn.py,
v0.34.0: `_linear_attn_decode_kernel`), launched as vLLM's `linear_decode_forward_triton`
launches it, so that its launch choices are knobs.

The grid is (sequences, heads, d / BLOCK_SIZE).  Each program loads its sequence's pool
slot (returning at once for PAD_SLOT_ID, -1), its head's decay rate, the whole q and k rows
(d values, fp32) and BLOCK_SIZE values of v; forms the [d, BLOCK_SIZE] outer product k^T v,
adds exp(-slope) times the matching columns of the slot's state (read in the pool's dtype),
stores that back in place and writes q times it, summed over d, as BLOCK_SIZE fp32
outputs.  No loop: one read and one write of each state column block, a memory-bound
update of the linear-attention cache.

vLLM's launch: BLOCK_SIZE = 32 (`linear_attention_decode`'s default, passed through by
MiniMax's `_decode_infer`), Triton's default 4 warps (vLLM passes none), pad_slot_id =
PAD_SLOT_ID = -1.  Knobs: the column block and the warps, None keeping vLLM's; the kernel
has no loop, so the stages are no knob.  vLLM's per-call output (`empty_like(q)`) is made
in `prepare`; its rearrange of the output to [seqs, heads x d] (a copy) is left out.  The
pool is updated in place: repeated timed calls keep decaying and adding to the states.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK = 32
TRITON_DEFAULT_WARPS = 4
PAD_SLOT_ID = -1  # vllm/v1/attention/backends/utils.py


@dataclass(frozen=True)
class LightningDecodeConfig:
    block_size: int | None = None  # None: vLLM's 32
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)


def prepare(
    cfg: LightningDecodeConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
    state: torch.Tensor, slope: torch.Tensor, slots: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("vllm_lightning_decode")
    if q.dim() != 4 or q.shape[2] != 1 or k.shape != q.shape or v.shape != q.shape:
        raise ValueError("q, k and v must be [seqs, heads, 1, d] tensors alike")
    seqs, heads, _, d = q.shape
    if not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous()):
        raise ValueError("q, k and v must be contiguous (vLLM makes them so)")
    if state.dim() != 4 or state.shape[1:] != (heads, d, d):
        raise ValueError("the pool must be a [slots, heads, d, d] tensor")
    block = cfg.block_size or VLLM_BLOCK
    if d & (d - 1) or d % block:
        raise ValueError("d must be a power of two and a multiple of the block")
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    out = torch.empty_like(q)
    grid = (seqs, heads, d // block)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod._linear_attn_decode_kernel[grid](
            q, k, v, state, slope, slots, out, d, q.stride(0), q.stride(1), state.stride(0),
            state.stride(1), state.stride(2), state.stride(3), pad_slot_id=PAD_SLOT_ID,
            BLOCK_SIZE=block, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_linear_attn_decode_kernel"],
            block_size=block, num_warps=warps, programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out, state

    return launch
