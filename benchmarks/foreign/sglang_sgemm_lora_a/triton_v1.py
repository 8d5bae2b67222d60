"""SGLang's segmented LoRA A GEMM with SGLang's own launch (`sgemm_lora_a_fwd`'s, no
heuristic, autotuner or tuned table): BLOCK_S 16, BLOCK_R 16, BLOCK_K 256, Triton's default
4 warps and 3 stages; one program row per request, the first grid axis sized by the longest
request (one token each in a decode batch, as SGLang's CUDA graph launches it)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_sgemm_lora_a.launcher import SgemmLoraAConfig
from foreign.sglang_sgemm_lora_a.launcher import prepare as _prepare

CONFIG = SgemmLoraAConfig(block_s=None, block_r=None, block_k=None, num_warps=None, num_stages=None)


def prepare(*inputs: object) -> Callable[[], torch.Tensor]:
    """The request segments, the output buffer and the grid, outside the timed call."""
    return _prepare(CONFIG, *inputs)  # type: ignore[arg-type]


def sgemm_lora_a(*inputs: object) -> torch.Tensor:
    return prepare(*inputs)()
