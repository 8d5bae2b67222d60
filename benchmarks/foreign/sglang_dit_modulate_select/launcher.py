"""SGLang's per-token select of two adaLN modulations
(python/sglang/jit_kernel/diffusion/triton/scale_shift.py, v0.5.9:
`fuse_scale_shift_gate_select01_kernel_blc_opt`), launched as SGLang's
`fuse_scale_shift_gate_select01_kernel` launches it, so that its launch choices are knobs.

One program per BLOCK_L tokens x BLOCK_C channels of one sample: it loads the x tile, the
tokens' int32 index (cast to a bool), and the six [1, BLOCK_C] modulation rows of its
sample (shift, scale and gate of both sets, each reused by all BLOCK_L tokens of the tile),
selects per token with tl.where, and stores y = x * (1 + scale) + shift and the selected
gate, both full tiles.  Memory-bound: x read once, y and the gate written once; the
modulation rows are re-read by every token tile (tokens / BLOCK_L times per sample).

SGLang's launch: 128 x 128 tiles (the wrapper's defaults, which Qwen-Image's `_modulate`
keeps), 4 warps and 2 stages, grid (cdiv(tokens, 128), cdiv(hidden, 128), batch); no
autotune.  Knobs: the two tile sides and the warps, None keeping SGLang's; the stages are
no knob (the kernel has no loop), and tiles of more than 256 elements per thread are
refused (see MAX_PER_THREAD).  The outputs, allocated per call by SGLang, are made in
`prepare`.
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
# The launcher refuses tiles of more than 256 elements per thread: SGLang's 128 x 128 over 4
# warps holds 128 and compiles for sm_90 in 0.8 s, 256 per thread in 3 to 5 s, and 256 x 512
# over one warp (4096) had not compiled after a minute.
MAX_PER_THREAD = 256


@dataclass(frozen=True)
class ModulateSelectConfig:
    block_l: int | None = None  # None: SGLang's 128 tokens per tile
    block_c: int | None = None  # None: SGLang's 128 channels per tile
    num_warps: int | None = None  # None: SGLang's 4


def prepare(
    cfg: ModulateSelectConfig, x: torch.Tensor, scale0: torch.Tensor, shift0: torch.Tensor,
    gate0: torch.Tensor, scale1: torch.Tensor, shift1: torch.Tensor, gate1: torch.Tensor,
    index: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("sglang_dit_modulate_select")
    kernel = mod.fuse_scale_shift_gate_select01_kernel_blc_opt
    batch, tokens, hidden = x.shape
    block_l = cfg.block_l or SGLANG_BLOCK_L
    block_c = cfg.block_c or SGLANG_BLOCK_C
    warps = cfg.num_warps or SGLANG_WARPS
    if block_l * block_c > MAX_PER_THREAD * 32 * warps:
        raise ValueError(
            f"a {block_l} x {block_c} tile over {warps} warps holds more than "
            f"{MAX_PER_THREAD} values per thread (each of x, y and the gate)"
        )
    out = torch.empty_like(x)
    gate_out = torch.empty_like(x)
    grid = (triton_cdiv(tokens, block_l), triton_cdiv(hidden, block_c), batch)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = kernel[grid](
            x, shift0, scale0, gate0, shift1, scale1, gate1, index, out, gate_out,
            batch, tokens, hidden, x.stride(0), x.stride(1), x.stride(2),
            shift0.stride(0), shift0.stride(1), scale0.stride(0), scale0.stride(1),
            gate0.stride(0), gate0.stride(1), shift1.stride(0), shift1.stride(1),
            scale1.stride(0), scale1.stride(1), gate1.stride(0), gate1.stride(1),
            index.stride(0), index.stride(1),
            gate_out.stride(0), gate_out.stride(1), gate_out.stride(2),
            BLOCK_L=block_l, BLOCK_C=block_c, num_warps=warps, num_stages=SGLANG_STAGES,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1,
            kernel_names=["fuse_scale_shift_gate_select01_kernel_blc_opt"],
            block_l=block_l, block_c=block_c, num_warps=warps, num_stages=SGLANG_STAGES,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out, gate_out

    return launch


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)
