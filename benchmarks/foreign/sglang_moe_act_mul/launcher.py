"""SGLang's expert-filtered activation and multiply (python/sglang/srt/layers/moe/
fused_moe_triton/fused_moe_triton_kernels.py, v0.5.9: `act_and_mul_kernel`, with its jit
helpers `_apply_activation` and `tanh`), launched by our copy of SGLang's
`act_and_mul_triton` so that its launch choices are knobs.

The middle step of an MoE layer on SGLang's Triton MoE runner when the layer holds only
some of the experts (expert parallelism: `num_local_experts != num_experts`, so
`filter_expert` is set): the gate/up GEMM leaves [tokens * topk, 2 * inter], one row per
routing slot, and this kernel writes silu(gate) * up into [tokens * topk, inter] for the
rows whose expert is local.  One program per row reads the row's expert id (topk_ids,
unsorted layout: `expert_step` 1) and returns at once when it is -1; a live program walks
the row BLOCK_SIZE columns a step (a tl.range: pipelined by num_stages), loading the gate
and up slices, taking silu in fp32, rounding it to the dtype, multiplying and storing.
SGLang's choices: BLOCK_SIZE = 512, Triton's default 4 warps and 3 stages (the launch
names neither), the sorted layout only when the down GEMM uses TMA (not with the shipped
configs).  Knobs: `block_size`, `num_warps`, `num_stages`, None keeping SGLang's.

SGLang writes into the layer's preallocated intermediate (torch.empty: the rows of other
ranks' experts are never read again); here it is zeroed once in `prepare`, outside the timed
call, so that those rows compare equal.  The share of programs that find a local expert is
recorded as the launch's `live_program_fraction`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK_SIZE = 512
TRITON_WARPS = 4  # Triton's default: act_and_mul_triton passes no num_warps
TRITON_STAGES = 3  # Triton's default: act_and_mul_triton passes no num_stages
ACTIVATION = "silu"


@dataclass(frozen=True)
class MoeActMulConfig:
    block_size: int | None = None  # None: SGLang's 512 columns a step
    num_warps: int | None = None  # None: Triton's default 4
    num_stages: int | None = None  # None: Triton's default 3 (the column loop's pipeline)


def prepare(
    cfg: MoeActMulConfig, gateup: torch.Tensor, topk_ids: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_moe_act_mul")
    if gateup.dim() != 2 or not gateup.is_contiguous() or gateup.shape[1] % 2:
        raise ValueError("gateup must be a contiguous [rows, 2 * inter] tensor")
    rows, width = gateup.shape
    if topk_ids.numel() != rows:
        raise ValueError(f"{topk_ids.numel()} expert ids for {rows} rows")
    ids = topk_ids.reshape(-1)
    block = cfg.block_size or SGLANG_BLOCK_SIZE
    warps = cfg.num_warps or TRITON_WARPS
    stages = cfg.num_stages or TRITON_STAGES
    out = torch.zeros(rows, width // 2, device=gateup.device, dtype=gateup.dtype)
    grid = (rows,)
    live = int((ids != -1).sum().item())

    def launch() -> torch.Tensor:
        handle = mod.act_and_mul_kernel[grid](
            gateup, out, width, ids, 1, BLOCK_SIZE=block, ACTIVATION_TYPE=ACTIVATION,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["act_and_mul_kernel"],
            block_size=block, num_warps=warps, num_stages=stages, programs=rows,
            metrics={"live_program_fraction": live / rows if rows else 0.0},
        )  # fmt: skip
        return out

    return launch
