"""vLLM's fused sigmoid gate (vllm/kernels/triton/fused_sigmoid_gate_mul.py, v0.34.0:
`_fused_sigmoid_gate_mul_kernel`), launched as vLLM's `fused_sigmoid_gate_mul` launches it
for a bf16/fp16 output (no fp8 scale), so that its launch choices are knobs.

The grid is (tokens, cdiv(hidden, BLOCK)): each program loads BLOCK columns of one token's
attention output and gate, computes attn * sigmoid(gate) in fp32 and stores it in the
inputs' dtype.

vLLM's launch: BLOCK the next power of two of hidden up to 1024 columns, else 1024 up to
4096 columns, else 2048; 4 warps, 8 past 4096 columns; no autotune, no loop (the stages are
no knob).  Knobs: the block and the warps, None keeping vLLM's choice for the hidden size.
vLLM allocates the output per call (`torch.empty_like`); here it is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}


def vllm_params(hidden: int) -> tuple[int, int]:
    """vLLM's (BLOCK, num_warps) for a hidden size, as `fused_sigmoid_gate_mul` picks them."""
    if hidden <= 1024:
        return triton.next_power_of_2(hidden), 4
    if hidden <= 4096:
        return 1024, 4
    return 2048, 8


@dataclass(frozen=True)
class SigmoidGateMulConfig:
    block: int | None = None  # None: vLLM's block for the hidden size (1024 at 4096)
    num_warps: int | None = None  # None: vLLM's warps for the hidden size (4 at 4096)


def prepare(
    cfg: SigmoidGateMulConfig, attn: torch.Tensor, gate: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("vllm_sigmoid_gate_mul")
    if attn.dim() != 2 or attn.shape != gate.shape or attn.dtype != gate.dtype:
        raise ValueError("attn and gate must be 2-D tensors of one shape and dtype")
    if not (attn.is_contiguous() and gate.is_contiguous()):
        raise ValueError("attn and gate must be contiguous (vLLM's eager path takes others)")
    tokens, hidden = attn.shape
    v1_block, v1_warps = vllm_params(hidden)
    block = cfg.block or v1_block
    warps = cfg.num_warps or v1_warps
    out = torch.empty_like(attn)
    grid = (tokens, triton.cdiv(hidden, block))

    def launch() -> torch.Tensor:
        # vLLM passes x as the scale pointer when there is no fp8 scale
        handle = mod._fused_sigmoid_gate_mul_kernel[grid](
            attn, gate, out, attn, hidden, attn.stride(0), gate.stride(0), out.stride(0),
            BLOCK=block, QUANT_FP8=False, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fused_sigmoid_gate_mul_kernel"],
            block=block, num_warps=warps, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
