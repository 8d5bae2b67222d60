"""SGLang's masked SiLU-and-mul with per-group fp8 quantization (python/sglang/srt/layers/
moe/ep_moe/kernels.py, v0.5.9: `_silu_and_mul_post_quant_kernel`), launched as SGLang's
`silu_and_mul_masked_post_quant_fwd` launches it, so that its launch choices are knobs.

DeepEP's low-latency MoE (DeepSeek-V3 decode with expert parallelism) hands each rank its
local experts' tokens in a padded [experts, capacity, hidden] layout with a count per
expert (masked_m); DeepGEMM's masked grouped GEMM writes the gate and up projections into
[experts, capacity, 2 * inter] bf16, and this kernel, between the two grouped GEMMs, turns
each valid token row into the down projection's fp8 input: silu(gate) (fp32, cast back to
the input dtype) times up, then per 128-column group the absolute maximum (at least 1e-10),
the fp32 scale absmax / 448, and the group clamped and cast to e4m3.  The grid is (inter /
BLOCK_N column groups, BLOCK_NUM_PER_EXPERT token programs, experts); each program walks
its expert's valid tokens `BLOCK_NUM_PER_EXPERT` apart in a `tl.range` loop pipelined
NUM_STAGE deep, one 128-wide group per iteration; padded rows are never read or written.

SGLang's launch: BLOCK_N = the quantization group (128), BLOCK_NUM_PER_EXPERT 64 for fewer
than 4 local experts and 32 otherwise, num_warps 1, NUM_STAGE 6, UE8M0 scales off (on only
for Blackwell's DeepGEMM).  Knobs: the token programs per expert, the stages and the
warps, None keeping SGLang's; BLOCK_N is the quantization format (one scale per tile), no
knob.  The fp8 rows and the scales, allocated by SGLang's MoE runner on every call, are
made in `prepare` and zero-filled there once (the kernel never writes a padded row, so the
check compares every row).  Under the CPU interpreter (tests only) the fp32 -> e4m3 cast
is done by torch, as for `sglang_fp8_group_quant`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common
from foreign.sglang_fp8_group_quant.launcher import interpreter_fp8_cast

LAST_INFO: dict[str, Any] = {}
FP8 = torch.float8_e4m3fn
SGLANG_WARPS = 1
SGLANG_STAGES = 6


def sglang_blocks_per_expert(experts: int) -> int:
    """SGLang's BLOCK_NUM_PER_EXPERT: 64 below 4 local experts, else 32."""
    return 64 if experts < 4 else 32


@dataclass(frozen=True)
class SiluMulMaskedQuantConfig:
    blocks_per_expert: int | None = None  # None: SGLang's 64 below 4 experts, else 32
    num_stages: int | None = None  # None: SGLang's 6
    num_warps: int | None = None  # None: SGLang's 1


def prepare(
    cfg: SiluMulMaskedQuantConfig, x: torch.Tensor, masked_m: torch.Tensor, group: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("sglang_silu_mul_masked_quant")
    if x.dim() != 3 or not x.is_contiguous() or x.shape[-1] % (2 * group):
        raise ValueError(
            "x must be a contiguous [experts, capacity, 2 * inter] tensor, inter a multiple "
            "of the group"
        )
    experts, capacity, width = x.shape
    size_n = width // 2
    blocks = cfg.blocks_per_expert or sglang_blocks_per_expert(experts)
    stages = cfg.num_stages or SGLANG_STAGES
    warps = cfg.num_warps or SGLANG_WARPS
    out = torch.zeros((experts, capacity, size_n), device=x.device, dtype=FP8)
    scales = torch.zeros((experts, capacity, size_n // group), device=x.device, dtype=torch.float32)
    info = torch.finfo(FP8)
    grid = (size_n // group, blocks, experts)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        with interpreter_fp8_cast():
            handle = mod._silu_and_mul_post_quant_kernel[grid](
                x, *x.stride(), out, *out.stride(), scales, *scales.stride(), masked_m,
                size_n, info.max, -info.max, BLOCK_N=group, NUM_STAGE=stages,
                SCALE_UE8M0=False, num_warps=warps,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_silu_and_mul_post_quant_kernel"],
            block_n=group, blocks_per_expert=blocks, num_stages=stages, num_warps=warps,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out, scales

    return launch
