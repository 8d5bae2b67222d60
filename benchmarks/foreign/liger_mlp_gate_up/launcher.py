"""Liger-Kernel's fused SwiGLU MLP gate/up projection (liger_kernel.ops.mlp, 0.8.5): the
inference forward `_swiglu_kernel_forward_inference`, launched by our copy of Liger's
`gemm_swiglu(..., store_preact=False)` (what `LigerMLPFunction.forward` calls when no input
needs a gradient) so that its launch choices are knobs.

A dense dual GEMM with the SwiGLU in its epilogue, read through TMA tensor descriptors: the
grid is (ceil(seq / BLOCK_M) * ceil(hidden / BLOCK_N), batch); a program maps its first
index to a (row tile, column tile) pair through Liger's `_l2_swizzle` (GROUP_SIZE_M row
tiles walk the column tiles together; 1 is no swizzle), then walks the model width in
BLOCK_K steps, each loading a [1, BLOCK_M, BLOCK_K] box of x and [BLOCK_N, BLOCK_K] boxes
of the gate and up weights and issuing two tl.dot into fp32 accumulators; it stores
silu(gate) * up once, in the model dtype, through a [1, BLOCK_M, BLOCK_N] box (the TMA's
zero padding and clipped stores stand in for masks).  The down projection stays cuBLAS in
Liger and is not part of it.

Liger's launch: an autotuner over 32 configurations (BLOCK_M 32 or 64, BLOCK_N 128,
BLOCK_K 64 or 128, GROUP_SIZE_M 1 or 4, 4 or 8 warps, 2 or 3 stages) keyed on (dim, hidden,
a bucket of batch * seq), whose pre-hook sets the descriptors' block shapes.  `triton_v1`
pins the first of them (32 x 128 x 64, no swizzle, 4 warps, 2 stages: one compile instead
of 32, as `liger_mm_int8int2` does); the plain kernel under the autotuner is launched with
the descriptors built at the chosen block shapes, as the pre-hook would.  Knobs: `block_m`,
`block_n`, `block_k`, `group_m`, `num_warps`, `num_stages`, None keeping that pin.  The
output is allocated in `prepare` (Liger allocates it per call), with the descriptors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
# the first configuration of _swiglu_kernel_forward_inference's autotuner
LIGER_LAUNCH = {
    "block_m": 32,
    "block_n": 128,
    "block_k": 64,
    "group_m": 1,
    "num_warps": 4,
    "num_stages": 2,
}


@dataclass(frozen=True)
class LigerMlpGateUpConfig:
    block_m: int | None = None  # None: 32 (the autotuner's first configuration)
    block_n: int | None = None  # None: 128 (the only BLOCK_N Liger tunes)
    block_k: int | None = None  # None: 64
    group_m: int | None = None  # None: 1 (GROUP_SIZE_M; 1 is no L2 swizzle)
    num_warps: int | None = None  # None: 4
    num_stages: int | None = None  # None: 2


def _pick(cfg: LigerMlpGateUpConfig, name: str) -> int:
    value = getattr(cfg, name)
    return int(value) if value is not None else LIGER_LAUNCH[name]


def prepare(
    cfg: LigerMlpGateUpConfig,
    x: torch.Tensor,
    gate_weight: torch.Tensor,
    up_weight: torch.Tensor,
) -> Callable[[], torch.Tensor]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import mlp as liger
    from triton.tools.tensor_descriptor import TensorDescriptor

    if x.dim() != 3 or gate_weight.dim() != 2 or up_weight.shape != gate_weight.shape:
        raise ValueError("x [batch, seq, dim], gate and up weights [hidden, dim] each")
    x, gate_weight, up_weight, _ = liger._check_inputs(x, gate_weight, up_weight, up_weight)
    batch, seq, dim = x.shape
    hidden = gate_weight.shape[0]
    block_m, block_n, block_k = (_pick(cfg, n) for n in ("block_m", "block_n", "block_k"))
    group_m, warps, stages = (_pick(cfg, n) for n in ("group_m", "num_warps", "num_stages"))
    bucket_m = liger.get_bucket_m(batch * seq)
    out = torch.empty(batch, seq, hidden, device=x.device, dtype=x.dtype)
    # Liger builds them with dummy shapes and its autotuner's pre-hook sets these
    desc_x = TensorDescriptor.from_tensor(x, [1, block_m, block_k], padding="zero")
    desc_wg = TensorDescriptor.from_tensor(gate_weight, [block_n, block_k], padding="zero")
    desc_wu = TensorDescriptor.from_tensor(up_weight, [block_n, block_k], padding="zero")
    desc_out = TensorDescriptor.from_tensor(out, [1, block_m, block_n], padding="zero")
    grid = (triton.cdiv(seq, block_m) * triton.cdiv(hidden, block_n), batch)
    kernel = liger._swiglu_kernel_forward_inference.fn  # the plain kernel under the autotuner

    def launch() -> torch.Tensor:
        handle = kernel[grid](
            desc_x, desc_wg, desc_wu, desc_out, seq, dim, hidden, bucket_m,
            BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_SIZE_M=group_m,
            gate_multiplier=1.0, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_swiglu_kernel_forward_inference"],
            block_m=block_m, block_n=block_n, block_k=block_k, group_m=group_m,
            num_warps=warps, num_stages=stages, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
