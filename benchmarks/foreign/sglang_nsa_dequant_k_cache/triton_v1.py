"""SGLang's NSA fp8 K-cache dequantization with SGLang's own configuration: 128-column
tiles (the quantization tile, fixed), Triton's default 4 warps and 3 stages (SGLang passes
none; no autotune); the output and the record views made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_nsa_dequant_k_cache.launcher import NsaDequantConfig
from foreign.sglang_nsa_dequant_k_cache.launcher import prepare as _prepare

# dequantize_k_cache_paged: GROUP_SIZE=128, no num_warps or num_stages passed (Triton's 4, 3).
CONFIG = NsaDequantConfig(num_warps=None)


def prepare(cache: torch.Tensor, page_table: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output and the record views, outside the timed call."""
    return _prepare(CONFIG, cache, page_table)


def nsa_dequant(cache: torch.Tensor, page_table: torch.Tensor) -> torch.Tensor:
    return prepare(cache, page_table)()
