"""SGLang's causal conv1d decode update (python/sglang/srt/layers/attention/mamba/
causal_conv1d_triton.py, v0.5.9, adapted there from vLLM), launched by our copy of SGLang's
`causal_conv1d_update` as its hybrid linear-attention backend calls it on CUDA at every
decode step of a gated-delta-rule layer (Qwen3-Next's mixed q/k/v channels, Kimi Linear's
q, k and v apart): one token per sequence, the pool's slots through `conv_state_indices`,
no bias, SiLU, no speculative decoding, so that its launch choices are knobs.

One program per (sequence, BLOCK_N channels): it loads its slot index, the width - 1 state
columns of its channels (the pool is stored [slots, width - 1, dim], so a column is a
contiguous run of channels), shifts the window by one (the new token's x in the last
column) and stores it back in place, then forms the depthwise dot with the channels' width
weights in fp32, applies SiLU and writes one output row.  No loop: each program touches
BLOCK_N x (2 width) values.

SGLang's launch: BLOCK_N 256, no num_warps or num_stages (Triton's 4 and 3; with no loop
the stages change nothing).  Knobs: `block_n` and `num_warps`, None keeping SGLang's.  The
output is allocated in `prepare`, outside the timed call (SGLang's `torch.empty_like(x)`);
the pool is updated in place: repeated timed calls keep shifting it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK_N = 256
TRITON_DEFAULT_WARPS = 4
PAD_SLOT_ID = -1  # SGLang's, passed as pad_slot_id (USE_PAD_SLOT on)


@dataclass(frozen=True)
class Conv1dUpdateConfig:
    block_n: int | None = None  # None: SGLang's 256
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)


def prepare(
    cfg: Conv1dUpdateConfig, x: torch.Tensor, state: torch.Tensor, weight: torch.Tensor,
    slot_ids: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("sglang_conv1d_update")
    batch, dim = x.shape
    slots, state_len, _ = state.shape
    width = weight.shape[1]
    if state.shape[2] != dim or weight.shape[0] != dim or state_len != width - 1:
        raise ValueError("state [slots, width - 1, dim], weight [dim, width]")
    if slot_ids.shape != (batch,) or not 2 <= width <= 4:
        raise ValueError("one slot per sequence; widths 2 to 4")
    bn = cfg.block_n or SGLANG_BLOCK_N
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    # SGLang's caller's views: x [batch, dim, 1], the pool as [slots, dim, width - 1]
    x3 = x.unsqueeze(-1)
    conv_state = state.transpose(1, 2)
    out = torch.empty_like(x3)
    grid = (batch, triton.cdiv(dim, bn))
    args = (
        x3, weight, None, conv_state, None, slot_ids, None, x3, None, None, None, None, out,
        batch, dim, 1, state_len, slots,
        *x3.stride(), *weight.stride(), *conv_state.stride(), slot_ids.stride(0),
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        *out.stride(), PAD_SLOT_ID,
    )  # fmt: skip

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod._causal_conv1d_update_kernel[grid](
            *args, HAS_BIAS=False, KERNEL_WIDTH=width, SILU_ACTIVATION=True,
            IS_CONTINUOUS_BATCHING=True, IS_SPEC_DECODING=False,
            NP2_STATELEN=triton.next_power_of_2(state_len), NP2_SEQLEN=1, USE_PAD_SLOT=True,
            BLOCK_N=bn, SAVE_INTERMEDIATE=False, HAS_EAGLE_TREE_CUSTOM_ATTN_MASK=False,
            num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_causal_conv1d_update_kernel"],
            block_n=bn, num_warps=warps, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out.squeeze(-1), state

    return launch
