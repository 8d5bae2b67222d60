"""SGLang's DeepEP-normal MoE scatter with SGLang's own launch (`ep_scatter`'s, no
heuristic, autotuner or tuned table): the counts' cumsum and m_indices in BLOCK_E = 128
stores with 8 warps, one program per local expert; then min(tokens, 8192) programs of 8
warps walking the tokens grid-stride, copying each local slot's row and scales to the row
its atomic add gives it; the outputs made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_ep_scatter.launcher import EpScatterConfig, Outputs
from foreign.sglang_ep_scatter.launcher import prepare as _prepare

CONFIG = EpScatterConfig(block_e=None, fill_warps=None, copy_programs=None, copy_warps=None)


def prepare(
    recv_x: torch.Tensor, recv_x_scale: torch.Tensor, recv_topk: torch.Tensor,
    num_recv_tokens_per_expert: torch.Tensor,
) -> Callable[[], Outputs]:  # fmt: skip
    """The outputs, outside the timed call."""
    return _prepare(CONFIG, recv_x, recv_x_scale, recv_topk, num_recv_tokens_per_expert)


def ep_scatter(
    recv_x: torch.Tensor, recv_x_scale: torch.Tensor, recv_topk: torch.Tensor,
    num_recv_tokens_per_expert: torch.Tensor,
) -> Outputs:  # fmt: skip
    return prepare(recv_x, recv_x_scale, recv_topk, num_recv_tokens_per_expert)()
