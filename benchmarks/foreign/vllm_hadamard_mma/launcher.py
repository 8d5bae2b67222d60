"""vLLM's Hadamard transform by MMA (vllm/v1/attention/ops/int4_per_token_head.py, v0.34.0:
`_hadamard_mma_kernel`), launched as vLLM's `_triton_hadamard_transform` launches it, so
that its launch choices are knobs.

One program per BLOCK_M rows.  Each loads its [BLOCK_M, D] rows and the whole [D, D]
+-1 Hadamard matrix (in the rows' dtype, built once and cached by vLLM) and writes one
tl.dot of them, fp32 accumulation, in the rows' dtype: the unnormalized Walsh-Hadamard
transform as a dense matrix product on tensor cores, no loop.

vLLM's launch: BLOCK_M = 16, 4 warps, 1 stage (all fixed in `_triton_hadamard_transform`;
one stage because the kernel has no loop).  Knobs: the row block, the warps and the stages,
None keeping vLLM's.  The wrapper's work dtype (bf16 for fp32 rows: fp32 rows are cast to
bf16, transformed and cast back, as vLLM does), its cached Hadamard matrix and the output
are made in `prepare`; the fp32 cast back is inside the timed call, as upstream.  Under
the CPU interpreter only, whose bf16 tl.dot is wrong, fp32 rows go through fp16 instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK_M = 16
VLLM_WARPS = 4
VLLM_STAGES = 1


@dataclass(frozen=True)
class HadamardMmaConfig:
    block_m: int | None = None  # None: vLLM's 16 rows per program
    num_warps: int | None = None  # None: vLLM's 4
    num_stages: int | None = None  # None: vLLM's 1


def hadamard_matrix(d: int, dtype: torch.dtype, device: torch.device | str) -> torch.Tensor:
    """vLLM's `_get_hadamard_matrix`: Sylvester's construction in fp32, cast to dtype."""
    h = torch.ones(1, 1, dtype=torch.float32, device=device)
    while h.shape[0] < d:
        h = torch.cat([torch.cat([h, h], dim=1), torch.cat([h, -h], dim=1)], dim=0)
    return h.to(dtype).contiguous()


def prepare(cfg: HadamardMmaConfig, x: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("vllm_hadamard_mma")
    d = x.shape[-1]
    if d & (d - 1) or not 16 <= d <= 128:
        raise ValueError("the Triton tier takes power-of-two widths from 16 to 128")
    orig_dtype = x.dtype
    work_dtype = torch.bfloat16 if orig_dtype == torch.float32 else orig_dtype
    if work_dtype == torch.bfloat16 and os.environ.get("TRITON_INTERPRET") == "1":
        work_dtype = torch.float16  # the interpreter's bf16 tl.dot is wrong (interpreter only)
    x2d = x.contiguous().to(work_dtype).reshape(-1, d)
    out2d = torch.empty_like(x2d)
    n_rows = x2d.shape[0]
    h_mat = hadamard_matrix(d, work_dtype, x.device)  # vLLM caches it per (d, dtype, device)
    block_m = cfg.block_m or VLLM_BLOCK_M
    warps = cfg.num_warps or VLLM_WARPS
    stages = cfg.num_stages or VLLM_STAGES
    grid = (triton.cdiv(n_rows, block_m),)

    def launch() -> torch.Tensor:
        handle = mod._hadamard_mma_kernel[grid](
            x2d, h_mat, out2d, n_rows, x2d.stride(0), x2d.stride(1), out2d.stride(0),
            out2d.stride(1), BLOCK_M=block_m, D=d, num_stages=stages, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_hadamard_mma_kernel"],
            block_m=block_m, num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return out2d.reshape(x.shape).to(orig_dtype)

    return launch
