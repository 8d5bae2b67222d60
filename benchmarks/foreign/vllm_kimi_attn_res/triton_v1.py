"""vLLM's Kimi K3 attention residuals with vLLM's own launch: one source a step and 4 warps
from 256 tokens up (or with at most one block), else 4 sources and 8 warps, 2 stages, fixed
in `attn_res` (a token-count heuristic tuned on GB300; no autotuner or table), launch_pdl on
Hopper and later as vLLM sets it; the output made outside the timed call, the prefix and
the written block updated in place."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_kimi_attn_res.launcher import AttnResConfig
from foreign.vllm_kimi_attn_res.launcher import prepare as _prepare

CONFIG = AttnResConfig(block_l=None, num_warps=None, num_stages=None)


def prepare(
    prefix: torch.Tensor, delta: torch.Tensor, blocks: torch.Tensor, norm_weight: torch.Tensor,
    qk_weight: torch.Tensor, output_norm_weight: torch.Tensor, sources: int, layer_kind: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The output, outside the timed call."""
    weights = (norm_weight, qk_weight, output_norm_weight)
    return _prepare(CONFIG, prefix, delta, blocks, *weights, sources, layer_kind)


def attn_res(
    prefix: torch.Tensor, delta: torch.Tensor, blocks: torch.Tensor, norm_weight: torch.Tensor,
    qk_weight: torch.Tensor, output_norm_weight: torch.Tensor, sources: int, layer_kind: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(
        prefix, delta, blocks, norm_weight, qk_weight, output_norm_weight, sources, layer_kind
    )()
