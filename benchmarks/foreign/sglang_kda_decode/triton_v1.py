"""SGLang's Kimi Delta Attention decode step with SGLang's own launch
(`fused_sigmoid_gating_delta_rule_update`'s, no heuristic, autotuner or tuned table): one key
block of next_pow2(dk), value blocks of min(next_pow2(dv), 32), 1 warp and 3 stages, the
per-channel gate, beta and the q/k L2 norm computed in the kernel; the output made outside
the timed call, the pool updated in place."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_kda_decode.launcher import KdaDecodeConfig
from foreign.sglang_kda_decode.launcher import prepare as _prepare

CONFIG = KdaDecodeConfig(block_v=None, num_warps=None)


def prepare(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
    A_log: torch.Tensor, dt_bias: torch.Tensor, state: torch.Tensor, slots: torch.Tensor,
    cu_seqlens: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The output, outside the timed call."""
    return _prepare(CONFIG, q, k, v, a, b, A_log, dt_bias, state, slots, cu_seqlens)


def kda_decode(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
    A_log: torch.Tensor, dt_bias: torch.Tensor, state: torch.Tensor, slots: torch.Tensor,
    cu_seqlens: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(q, k, v, a, b, A_log, dt_bias, state, slots, cu_seqlens)()
