"""Inkling's relative-position logits projection with vLLM's own launch: below 2,048 rows
the low-latency kernel's 32 x 64 tiles, from there the throughput kernel's 32 x 128 tiles
two row tiles a program, 4 warps either way (module constants in vLLM's qkvr_prep; no
heuristic, autotuner or tuned table); the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_rel_proj.launcher import RelProjConfig
from foreign.vllm_rel_proj.launcher import prepare as _prepare

CONFIG = RelProjConfig(block_m=None, block_n=None, group_m=None, num_warps=None)


def prepare(
    qkvr: torch.Tensor, rel_proj: torch.Tensor, heads: int, kvheads: int, head: int
) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, qkvr, rel_proj, heads, kvheads, head)


def rel_proj(
    qkvr: torch.Tensor, rel_proj: torch.Tensor, heads: int, kvheads: int, head: int
) -> torch.Tensor:
    return prepare(qkvr, rel_proj, heads, kvheads, head)()
