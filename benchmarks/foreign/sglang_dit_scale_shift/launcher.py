"""SGLang's adaLN modulation kernel (python/sglang/jit_kernel/diffusion/triton/
scale_shift.py, v0.5.9: `fuse_scale_shift_kernel_blc_opt`), launched as SGLang's
`fuse_scale_shift_kernel` launches it for 3-D scale and shift, so that its launch choices
are knobs.

One program per BLOCK_L tokens x BLOCK_C channels of one sample: it loads the x tile and
the matching shift and scale tiles through their own strides (per-token modulations, as
Wan2.2-TI2V's per-token timesteps give: fp32 views of one [batch, tokens, 2, hidden]
tensor here, rows 2 x hidden apart), and stores y = x * (1 + scale) + shift, computed in
fp32 and rounded once to x's dtype.  Memory-bound and streaming: every input element is
read once and every output element written once; no reuse across tiles.

SGLang's launch: 128 x 128 tiles (the wrapper's `block_l` and `block_c` defaults, which
LayerNormScaleShift keeps), 4 warps and 2 stages, grid (cdiv(tokens, 128),
cdiv(hidden, 128), batch); no autotune.  Knobs: the two tile sides and the warps, None
keeping SGLang's; the stages are no knob (the kernel has no loop), and tiles of more than
256 elements per thread are refused (see MAX_PER_THREAD).  The output, allocated per call
by SGLang, is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK_L = 128
SGLANG_BLOCK_C = 128
SGLANG_WARPS = 4
SGLANG_STAGES = 2
# As in sglang_dit_modulate_select: tiles of more than 256 values per thread (each of x,
# shift, scale and y) are refused; they spill or take minutes to compile and no launch of
# SGLang's comes near them.
MAX_PER_THREAD = 256


@dataclass(frozen=True)
class ScaleShiftConfig:
    block_l: int | None = None  # None: SGLang's 128 tokens per tile
    block_c: int | None = None  # None: SGLang's 128 channels per tile
    num_warps: int | None = None  # None: SGLang's 4


def prepare(
    cfg: ScaleShiftConfig, x: torch.Tensor, scale: torch.Tensor, shift: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_dit_scale_shift")
    kernel = mod.fuse_scale_shift_kernel_blc_opt
    batch, tokens, hidden = x.shape
    block_l = cfg.block_l or SGLANG_BLOCK_L
    block_c = cfg.block_c or SGLANG_BLOCK_C
    warps = cfg.num_warps or SGLANG_WARPS
    if block_l * block_c > MAX_PER_THREAD * 32 * warps:
        raise ValueError(
            f"a {block_l} x {block_c} tile over {warps} warps holds more than "
            f"{MAX_PER_THREAD} values per thread (each of x, shift, scale and y)"
        )
    # SGLang's wrapper: 3-D scale and shift expanded to [batch, tokens, hidden] (a no-op
    # here) and passed with their strides; neither is a scalar.
    scale_exp = scale.expand(batch, tokens, hidden)
    shift_exp = shift.expand(batch, tokens, hidden)
    out = torch.empty_like(x)
    grid = (triton_cdiv(tokens, block_l), triton_cdiv(hidden, block_c), batch)

    def launch() -> torch.Tensor:
        handle = kernel[grid](
            x, shift_exp, scale_exp, 1.0, out, batch, tokens, hidden,
            x.stride(0), x.stride(1), x.stride(2),
            shift_exp.stride(0), shift_exp.stride(1), shift_exp.stride(2),
            scale_exp.stride(0), scale_exp.stride(1), scale_exp.stride(2),
            SCALE_IS_SCALAR=False, SHIFT_IS_SCALAR=False,
            BLOCK_L=block_l, BLOCK_C=block_c, num_warps=warps, num_stages=SGLANG_STAGES,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1,
            kernel_names=["fuse_scale_shift_kernel_blc_opt"],
            block_l=block_l, block_c=block_c, num_warps=warps, num_stages=SGLANG_STAGES,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out

    return launch


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)
