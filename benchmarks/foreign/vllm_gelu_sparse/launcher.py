"""vLLM's Gemma 3n activation-sparsity GELU-and-mul (vllm/kernels/triton/activation.py,
v0.34.0: `_gelu_and_mul_sparse_kernel`), launched as vLLM's
`_gelu_and_mul_sparse_triton_op` launches it, so that its launch choices are knobs.

The grid is one program per token row.  Each program loads the row's whole gate half and
up half (BLOCK_SIZE lanes each, masked past d) into fp32 registers, reduces the gate to its
mean and its standard deviation, rounds mean, std, std x multiplier and the cutoff to the
input dtype as PyTorch's op-by-op reference would, subtracts the cutoff and clamps at zero
(the Gaussian top-k that keeps about 5% of the gate), applies the tanh GELU and multiplies
by the up half, writing [rows, d] in the input dtype.

vLLM's launch: BLOCK_SIZE = next_power_of_2(d) (a program takes the whole row), num_warps =
min(max(BLOCK_SIZE / 256, 1), 8), Triton's default 3 stages (vLLM passes none; the kernel
has no loop).  Knobs: the row block (at least d: the kernel has no loop over the row), the
warps and the stages, None keeping vLLM's.  The output is allocated in `prepare`, as vLLM
allocates it per call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class GeluSparseConfig:
    block: int | None = None  # None: vLLM's next_power_of_2(d)
    num_warps: int | None = None  # None: vLLM's min(max(block // 256, 1), 8)
    num_stages: int | None = None  # None: Triton's default 3 (vLLM passes none)


def vllm_warps(block: int) -> int:
    return min(max(block // 256, 1), 8)


def prepare(
    cfg: GeluSparseConfig, x: torch.Tensor, std_multiplier: float
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("vllm_gelu_sparse")
    if x.dim() != 2 or x.shape[-1] % 2 or not x.is_contiguous():
        raise ValueError("x must be a contiguous [rows, 2 * d] tensor")
    rows, two_d = x.shape
    d = two_d // 2
    block = cfg.block or triton.next_power_of_2(d)
    if block < d:
        raise ValueError("a program takes a whole row: the block must cover d")
    warps = cfg.num_warps or vllm_warps(block)
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    out = torch.empty(rows, d, dtype=x.dtype, device=x.device)
    grid = (rows,)

    def launch() -> torch.Tensor:
        handle = mod._gelu_and_mul_sparse_kernel[grid](
            x, out, d=d, std_multiplier=std_multiplier, BLOCK_SIZE=block,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_gelu_and_mul_sparse_kernel"],
            block=block, num_warps=warps, num_stages=stages, programs=rows,
        )  # fmt: skip
        return out

    return launch
