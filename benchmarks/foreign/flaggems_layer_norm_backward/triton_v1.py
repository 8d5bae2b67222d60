"""FlagGems' layer-norm backward with FlagGems' own configuration: the tuning YAML's first
value of each generated parameter and its fixed ones (the input gradient: 1 row per
program in 2048-column steps, 4 warps; the weight and bias gradients: 1 column per program
in 128-row steps, 4 warps; the loader's default 2 stages for both); dx, dw and db made
outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_layer_norm_backward.launcher import LayerNormBackwardConfig
from foreign.flaggems_layer_norm_backward.launcher import prepare as _prepare

# tune_configs.yaml's layer_norm_backward entry (block_r 1, 2, 4, 8 with BLOCK_COL_SIZE
# 2048; warps 4, 8, 16) and weight_bias_backward entry (block_c 1, 2, 4, 8 with
# BLOCK_ROW_SIZE 128; warps 4, 8, 16), the generic nvidia file (Hopper's has neither).
# FlagGems' autotuner would time all 12 configurations of each; triton_v1 takes the lists'
# first values, as for the other FlagGems specs.
CONFIG = LayerNormBackwardConfig(
    dx_block_rows=None, dx_block_cols=None, dx_warps=None, wb_block_rows=None,
    wb_block_cols=None, wb_warps=None, num_stages=None,
)  # fmt: skip


def prepare(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
    mean: torch.Tensor, rstd: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:  # fmt: skip
    """dx, dw and db, outside the timed call."""
    return _prepare(CONFIG, dy, x, weight, bias, mean, rstd)


def layer_norm_backward(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
    mean: torch.Tensor, rstd: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(dy, x, weight, bias, mean, rstd)()
