"""FlagGems' layer-norm backward (src/flag_gems/ops/layernorm.py, v5.0.2:
`layer_norm_backward_kernel` and `weight_bias_backward_kernel`), launched as FlagGems'
`layer_norm_backward` launches them when the input, the weight and the bias all need
gradients (output_mask all true), so that their launch choices are knobs.

The first launch is the input gradient: one program per BLOCK_ROW_SIZE rows walks the
hidden size twice in BLOCK_COL_SIZE steps, first summing dy * w and dy * w * x_hat per row
into two fp32 tiles (x_hat = (x - mean) * rstd from the forward's saved statistics), then
reading dy and x again to write dx = rstd * (dy * w - (sum1 + x_hat * sum2) / N).  The
second is the weight and bias gradient: one program per BLOCK_COL_SIZE columns walks all
the rows in BLOCK_ROW_SIZE steps, accumulating dy * x_hat and dy per column in fp32 tiles,
then reduces the tiles over their rows and stores dw and db (a column reduction: each
step's loads are BLOCK_COL_SIZE elements wide per row, strided by the hidden size).

FlagGems' launch: `@triton.autotune` of each kernel over the tuning YAML's entry (the
generic nvidia file; Hopper's has none): `layer_norm_backward` generated from block_r
(1, 2, 4, 8) rows with BLOCK_COL_SIZE fixed at 2048 and warps (4, 8, 16), keyed on M and
N; `weight_bias_backward` from block_c (1, 2, 4, 8) columns with BLOCK_ROW_SIZE fixed at
128 and warps (4, 8, 16), keyed on N; both with the loader's default 2 stages.  Knobs: each
launch's two tiles and warps and the stages of both, None keeping the YAML's first value
of each (1 x 2048 and 4 warps; 128 x 1 and 4 warps; 2 stages).  FlagGems allocates dx, dw
and db per call; here they are made in `prepare`.

Under the CPU interpreter only, the kernels are imported from a rewritten copy of the
fetched file: their `and` between a row mask and a column mask, which compiled Triton reads
element-wise, is read there as `&` (the interpreter would take a tensor's truth).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the tuning YAML's first value of each generated parameter (and its fixed ones), and the
# loader's default stages
YAML_FIRST = {
    "dx_block_rows": 1,
    "dx_block_cols": 2048,
    "dx_warps": 4,
    "wb_block_rows": 128,
    "wb_block_cols": 1,
    "wb_warps": 4,
    "num_stages": 2,
}


@dataclass(frozen=True)
class LayerNormBackwardConfig:
    dx_block_rows: int | None = None  # None: the YAML's first block_r, 1 row per program
    dx_block_cols: int | None = None  # None: the YAML's fixed 2048 columns per step
    dx_warps: int | None = None  # None: the YAML's first warps, 4
    wb_block_rows: int | None = None  # None: the YAML's fixed 128 rows per step
    wb_block_cols: int | None = None  # None: the YAML's first block_c, 1 column per program
    wb_warps: int | None = None  # None: the YAML's first warps, 4
    num_stages: int | None = None  # None: the loader's default 2, both launches


def _module() -> ModuleType:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return _common.load_source_rewritten(
            "flaggems_layer_norm_backward", _common.ElementwiseBoolOps(ops=("and",))
        )
    return _common.load_source("flaggems_layer_norm_backward")


def prepare(
    cfg: LayerNormBackwardConfig, dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
    bias: torch.Tensor, mean: torch.Tensor, rstd: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _module()
    if x.dim() != 2 or dy.shape != x.shape:
        raise ValueError("dy and x must be [rows, hidden] matrices of the same shape")
    m, n = x.shape
    if weight.shape != (n,) or bias.shape != (n,) or mean.shape != (m,) or rstd.shape != (m,):
        raise ValueError("weight and bias must be [hidden], mean and rstd [rows]")
    # FlagGems makes every operand contiguous first (a no-op here)
    dy, x, weight, mean, rstd = (t.contiguous() for t in (dy, x, weight, mean, rstd))
    knob = {f: getattr(cfg, f) or YAML_FIRST[f] for f in YAML_FIRST}
    dx = torch.empty_like(x)
    dw = torch.empty_like(weight)
    db = torch.empty_like(bias)
    grid_dx = (triton.cdiv(m, knob["dx_block_rows"]), 1, 1)
    grid_wb = (triton.cdiv(n, knob["wb_block_cols"]), 1, 1)
    stages = knob["num_stages"]

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        h1 = mod.layer_norm_backward_kernel[grid_dx](
            dy, x, weight, mean, rstd, dx, m, n, BLOCK_ROW_SIZE=knob["dx_block_rows"],
            BLOCK_COL_SIZE=knob["dx_block_cols"], num_warps=knob["dx_warps"],
            num_stages=stages,
        )  # fmt: skip
        h2 = mod.weight_bias_backward_kernel[grid_wb](
            dy, x, mean, rstd, dw, db, m, n, BLOCK_ROW_SIZE=knob["wb_block_rows"],
            BLOCK_COL_SIZE=knob["wb_block_cols"], num_warps=knob["wb_warps"],
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, h1, kernels=2,
            kernel_names=["layer_norm_backward_kernel", "weight_bias_backward_kernel"],
            programs=grid_dx[0] + grid_wb[0], dx_programs=grid_dx[0],
            wb_programs=grid_wb[0], **knob,
        )  # fmt: skip
        del h2
        return dx, dw, db

    return launch
