"""vLLM's fused GDN prefill post-conv preparation with vLLM's own launch: 16 tokens per
program, BK and BV the key and value head sizes' next powers of two, 4 warps and 2 stages,
as `fused_post_conv_prep` passes them (no autotuner, heuristic or tuned table); the five
outputs made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_gdn_post_conv.launcher import GdnPostConvConfig, Outputs
from foreign.vllm_gdn_post_conv.launcher import prepare as _prepare

CONFIG = GdnPostConvConfig(block_t=None, num_warps=None, num_stages=None)


def prepare(
    conv_out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, A_log: torch.Tensor,
    dt_bias: torch.Tensor, k_heads: int, head_k: int, head_v: int,
) -> Callable[[], Outputs]:  # fmt: skip
    """The five outputs, outside the timed call."""
    return _prepare(CONFIG, conv_out, a, b, A_log, dt_bias, k_heads, head_k, head_v)


def post_conv_prep(
    conv_out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, A_log: torch.Tensor,
    dt_bias: torch.Tensor, k_heads: int, head_k: int, head_v: int,
) -> Outputs:  # fmt: skip
    return prepare(conv_out, a, b, A_log, dt_bias, k_heads, head_k, head_v)()
