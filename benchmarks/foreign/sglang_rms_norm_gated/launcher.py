"""SGLang's gated RMSNorm (python/sglang/srt/layers/attention/fla/layernorm_gated.py,
v0.5.9: `_layer_norm_fwd_1pass_kernel`), launched as SGLang's `_layer_norm_fwd` launches it
for `rms_norm_gated`, so that its launch choices are knobs.

Qwen3-Next's gated delta net ends every linear-attention layer with it: the recurrence's
output [tokens, heads, head_dim] and the gate z are viewed as [tokens * heads, head_dim]
rows, and each row is RMS-normalized over its head_dim values, scaled by the norm's weight
and multiplied by silu(z) (group_size None: one group, the row; norm_before_gate; no bias).
One program per ROWS_PER_BLOCK rows loads a [ROWS_PER_BLOCK, BLOCK_N] tile of x (BLOCK_N
covers the row, masked past it; no loop), reduces the squares along the row in fp32,
stores each row's rstd (fp32, which `rms_norm_gated` discards), loads the weight row and
the z tile, and stores x * rstd * w * z * sigmoid(z) in x's dtype.

SGLang's choices: BLOCK_N = next_power_of_2(head_dim) (at most 64 KB of the dtype),
num_warps = min(max(BLOCK_N // 256, 1), 8) (1 warp for a 128-wide head), and
ROWS_PER_BLOCK = min(next_power_of_2(cdiv(rows, 2 * SMs)), 4) (`calc_rows_per_block`: 4
without piecewise CUDA graphs once the rows exceed 6 per SM pair, fewer for small
batches); no stages (Triton's default; the kernel has no loop).  Knobs: the rows per
program and the warps, None keeping SGLang's.  BLOCK_N is not a knob (it must cover the
row and anything wider is masked work).  Under the CPU interpreter (no SM count) the rule
takes INTERPRETER_SMS.  The output and the rstd buffer are made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from foreign.sglang_rms_norm_gated.reference import EPS

LAST_INFO: dict[str, Any] = {}
MAX_ROWS_PER_BLOCK = 4  # layernorm_gated.py's cap
INTERPRETER_SMS = 4


@dataclass(frozen=True)
class RmsNormGatedConfig:
    rows_per_block: int | None = None  # None: SGLang's calc_rows_per_block (<= 4)
    num_warps: int | None = None  # None: SGLang's min(max(BLOCK_N // 256, 1), 8)


def _sm_count(device: torch.device) -> int:
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).multi_processor_count)
    return INTERPRETER_SMS


def sglang_rows_per_block(rows: int, device: torch.device) -> int:
    """`calc_rows_per_block` without piecewise CUDA graphs (SGLang's default)."""
    per = triton.next_power_of_2(triton.cdiv(rows, 2 * _sm_count(device)))
    return min(per, MAX_ROWS_PER_BLOCK)


def prepare(
    cfg: RmsNormGatedConfig, x: torch.Tensor, z: torch.Tensor, weight: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_rms_norm_gated")
    if x.shape != z.shape or not (x.is_contiguous() and z.is_contiguous()):
        raise ValueError("x and z must be contiguous and of one shape [..., head_dim]")
    n = x.shape[-1]
    if weight.shape != (n,) or not weight.is_contiguous():
        raise ValueError("weight must be a contiguous [head_dim] vector")
    x2 = x.view(-1, n)
    z2 = z.view(-1, n)
    m = x2.shape[0]
    block_n = min(65536 // x.element_size(), triton.next_power_of_2(n))
    if n > block_n:
        raise ValueError("SGLang's gated norm takes rows of at most 64 KB")
    rows = cfg.rows_per_block or sglang_rows_per_block(m, x.device)
    warps = cfg.num_warps or min(max(block_n // 256, 1), 8)
    out = torch.empty_like(x)
    y2 = out.view(-1, n)
    rstd = torch.empty(m, dtype=torch.float32, device=x.device)
    grid = (triton.cdiv(m, rows), 1)

    def launch() -> torch.Tensor:
        with _common.interpreter_float_scalars():
            handle = mod._layer_norm_fwd_1pass_kernel[grid](
                x2, y2, weight, None, z2, None, rstd, x2.stride(0), y2.stride(0),
                z2.stride(0), m, n, EPS, BLOCK_N=block_n, ROWS_PER_BLOCK=rows,
                HAS_BIAS=False, HAS_Z=True, NORM_BEFORE_GATE=True, IS_RMS_NORM=True,
                num_warps=warps, ACTIVATION="swish",
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_layer_norm_fwd_1pass_kernel"],
            block_n=block_n, rows_per_block=rows, num_warps=warps, programs=grid[0],
        )  # fmt: skip
        return out

    return launch
