"""SGLang's per-tensor fp8 quantization for absorbed MLA (python/sglang/srt/layers/
quantization/fp8_kernel.py, v0.5.9: `_per_tensor_quant_mla_fp8_stage1` and `_stage2`),
launched as SGLang's `per_tensor_quant_mla_fp8` launches them, so that their launch choices
are knobs.

The input is a [heads, tokens, dim] view of a [tokens, heads, dim] tensor (DeepSeek's
`q_nope.transpose(0, 1)` or the latent attention output's), read through its strides.  Stage
1: one program per (token, head) row loads its `dim` values (a BLOCK_SIZE-wide masked tile,
BLOCK_SIZE = next_pow2(dim)) in fp32, takes their absolute maximum (at least eps = 1e-12) and
folds absmax / 448 into the one fp32 scale with tl.atomic_max.  Stage 2: the same grid loads
the scale and the row again and writes it clamped to +-448 and cast to e4m3 into a
contiguous [heads, tokens, dim] output (the transpose the batched fp8 GEMM after it wants).

SGLang's launch: BLOCK_SIZE next_pow2(dim), Triton's default 4 warps for both stages (it
passes none), grid (tokens, heads).  Knobs: the row tile (at least next_pow2(dim)) and each
stage's warps, None keeping SGLang's.  Neither stage has a loop, so the stages are no knob.
The scale buffer is zeroed once in `prepare` (SGLang hands the kernel a zeroed one per call):
repeated calls fold the same maximum again, so the result does not change.  The fp8 output,
allocated per call by SGLang, is made in `prepare`.  Under the CPU interpreter (tests only)
the fp32 -> e4m3 cast is torch's (see `foreign.sglang_fp8_group_quant.launcher`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from foreign.sglang_fp8_group_quant.launcher import interpreter_fp8_cast

LAST_INFO: dict[str, Any] = {}
FP8 = torch.float8_e4m3fn
EPS = 1e-12
TRITON_DEFAULT_WARPS = 4


@dataclass(frozen=True)
class MlaTensorQuantConfig:
    block_size: int | None = None  # None: next_pow2(dim), SGLang's
    stage1_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    stage2_warps: int | None = None  # None: Triton's default 4


def prepare(
    cfg: MlaTensorQuantConfig, x: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("sglang_fp8_mla_scaled_mm")
    if x.dim() != 3 or x.stride(-1) != 1:
        raise ValueError("x must be a [heads, tokens, dim] view with unit stride in dim")
    heads, tokens, dim = x.shape
    block = cfg.block_size or triton.next_power_of_2(dim)
    if block < dim:
        raise ValueError(f"block_size {block} is below the row's {dim} values (no loop)")
    w1 = cfg.stage1_warps or TRITON_DEFAULT_WARPS
    w2 = cfg.stage2_warps or TRITON_DEFAULT_WARPS
    info = torch.finfo(FP8)
    x_q = torch.empty((heads, tokens, dim), dtype=FP8, device=x.device)
    x_s = torch.zeros((1,), dtype=torch.float32, device=x.device)
    grid = (tokens, heads)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        with interpreter_fp8_cast():
            h1 = mod._per_tensor_quant_mla_fp8_stage1[grid](
                x, x_s, dim, x.stride(0), x.stride(1), EPS, info.max, block, num_warps=w1,
            )  # fmt: skip
            mod._per_tensor_quant_mla_fp8_stage2[grid](
                x, x_s, x_q, tokens, dim, x.stride(0), x.stride(1), info.min, info.max,
                block, num_warps=w2,
            )  # fmt: skip
        _common.record(
            LAST_INFO, h1, kernels=2,
            kernel_names=["_per_tensor_quant_mla_fp8_stage1", "_per_tensor_quant_mla_fp8_stage2"],
            block_size=block, stage1_warps=w1, stage2_warps=w2, programs=tokens * heads,
        )  # fmt: skip
        return x_q, x_s

    return launch
