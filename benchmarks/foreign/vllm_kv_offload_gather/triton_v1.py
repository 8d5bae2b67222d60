"""vLLM's HF3FS KV connector gather with vLLM's own launch: 128 values per loop step (fixed
in `gather_kv_caches`), Triton's default 4 warps and 3 stages (vLLM passes neither; no
heuristic, autotuner or tuned table); the token indices, the pointer table and the staging
buffer made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_kv_offload_gather.launcher import KvGatherConfig
from foreign.vllm_kv_offload_gather.launcher import prepare as _prepare

CONFIG = KvGatherConfig(block=None, num_warps=None, num_stages=None)


def prepare(caches: torch.Tensor, block_id: int) -> Callable[[], torch.Tensor]:
    """The token indices, the layers' pointer table and the staging buffer, outside the
    timed call."""
    return _prepare(CONFIG, caches, block_id)


def gather(caches: torch.Tensor, block_id: int) -> torch.Tensor:
    return prepare(caches, block_id)()
