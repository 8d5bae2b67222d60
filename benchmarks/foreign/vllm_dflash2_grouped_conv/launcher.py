"""vLLM's DFlash2 grouped convolution (vllm/model_executor/models/qwen3_dflash2.py, v0.34.0:
`_dflash2_grouped_conv_kernel`), launched as vLLM's `dflash2_grouped_conv_impl` launches it,
so that its launch choices are knobs.

The grid is one program per row and ELEMENT_BLOCK channels (rows * cdiv(hidden,
ELEMENT_BLOCK), flat): each loads its channels' static base and its row's group offset for
tap 0, then for each further tap (unrolled) the coefficient and the row `tap` earlier,
masked off before the draft block's start, accumulates in fp32 and stores in x's dtype.

vLLM's launch: ELEMENT_BLOCK 1024 when there are at least 128 rows and the hidden size is a
multiple of 1024, else 512; 4 warps; no autotune, no loop over memory (the taps are a
static range: the stages are no knob).  Knobs: the channel tile and the warps, None keeping
vLLM's choice for the shape.  vLLM allocates the output per call (`torch.empty_like`); here
it is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}


def vllm_element_block(rows: int, hidden: int) -> int:
    """vLLM's channel tile for a shape, as `dflash2_grouped_conv_impl` picks it."""
    return 1024 if rows >= 128 and hidden % 1024 == 0 else 512


@dataclass(frozen=True)
class GroupedConvConfig:
    element_block: int | None = None  # None: vLLM's 1024 (>= 128 rows, hidden % 1024 == 0) or 512
    num_warps: int | None = None  # None: vLLM's 4


def prepare(
    cfg: GroupedConvConfig,
    x: torch.Tensor,
    delta: torch.Tensor,
    base: torch.Tensor,
    block: int,
    group: int,
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("vllm_dflash2_grouped_conv")
    if x.dim() != 2 or base.dim() != 2 or delta.dim() != 3:
        raise ValueError("x [rows, hidden], delta [rows, taps, groups], base [taps, hidden]")
    rows, hidden = x.shape
    taps = base.shape[0]
    if base.shape[1] != hidden or delta.shape != (rows, taps, hidden // group):
        raise ValueError("x, delta and base disagree on rows, taps or groups")
    if x.stride(1) != 1 or base.stride(1) != 1 or delta.stride(2) != 1:
        raise ValueError("the channels (and groups) must be contiguous")
    if rows % block:
        raise ValueError(f"rows={rows} must be whole draft blocks of {block}")
    eb = cfg.element_block or vllm_element_block(rows, hidden)
    warps = cfg.num_warps or 4
    out = torch.empty_like(x)
    grid = (rows * triton.cdiv(hidden, eb),)

    def launch() -> torch.Tensor:
        handle = mod._dflash2_grouped_conv_kernel[grid](
            x, delta, base, out, x.stride(0), delta.stride(0), delta.stride(1),
            base.stride(0), out.stride(0), NUM_CHANNELS=hidden, BLOCK_SIZE=block,
            GROUP_SIZE=group, TAPS=taps, ELEMENT_BLOCK=eb, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_dflash2_grouped_conv_kernel"],
            element_block=eb, num_warps=warps, programs=grid[0],
        )  # fmt: skip
        return out

    return launch
