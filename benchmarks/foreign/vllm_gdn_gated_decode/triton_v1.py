"""vLLM's fused sigmoid-gating gated delta rule decode with vLLM's own launch: one key block
of next_power_of_2(dk), value blocks of min(next_power_of_2(dv), 32), 4 warps and 3 stages
(fixed in `fused_sigmoid_gating_delta_rule_update`; no heuristic for them, autotuner or
tuned table); the output made outside the timed call, the pool updated in place."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_gdn_gated_decode.launcher import GdnGatedDecodeConfig
from foreign.vllm_gdn_gated_decode.launcher import prepare as _prepare

CONFIG = GdnGatedDecodeConfig(block_v=None, num_warps=None, num_stages=None)


def prepare(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
    A_log: torch.Tensor, dt_bias: torch.Tensor, state: torch.Tensor, slots: torch.Tensor,
    cu_seqlens: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The output, outside the timed call."""
    return _prepare(CONFIG, q, k, v, a, b, A_log, dt_bias, state, slots, cu_seqlens)


def gdn_gated_decode(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
    A_log: torch.Tensor, dt_bias: torch.Tensor, state: torch.Tensor, slots: torch.Tensor,
    cu_seqlens: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(q, k, v, a, b, A_log, dt_bias, state, slots, cu_seqlens)()
