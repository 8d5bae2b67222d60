"""Liger-Kernel's attention-residuals forward with Liger's own launch: one program per
token, the whole hidden row in one block, the depth loop unrolled to max(4, next_pow2(N)),
num_warps from the row width (16 at 8192 columns)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_attn_res.launcher import LigerAttnResConfig
from foreign.liger_attn_res.launcher import prepare as _prepare

CONFIG = LigerAttnResConfig(num_warps=None)


def prepare(
    v: torch.Tensor, w_query: torch.Tensor, w_norm: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The output, softmax-weight and rstd buffers, outside the timed call."""
    return _prepare(CONFIG, v, w_query, w_norm)


def attn_res(
    v: torch.Tensor, w_query: torch.Tensor, w_norm: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return prepare(v, w_query, w_norm)()
