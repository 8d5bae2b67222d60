"""vLLM's NVFP4 activation quantize-dequantize with vLLM's own choice: 64 groups of 16 per
program (fewer when the row has fewer, as a power of two), Triton's default 4 warps; the
output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_nvfp4_qdq.launcher import Nvfp4QdqConfig
from foreign.vllm_nvfp4_qdq.launcher import prepare as _prepare

# _triton_nvfp4_quant_dequant: tile_blocks = min(64, next_pow2(num_blocks)), grid (rows,
# cdiv(num_blocks, tile_blocks)), no num_warps or num_stages passed.
CONFIG = Nvfp4QdqConfig(tile_blocks=None, num_warps=None)


def prepare(x: torch.Tensor, global_scale: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, x, global_scale)


def nvfp4_quant_dequant(x: torch.Tensor, global_scale: torch.Tensor) -> torch.Tensor:
    return prepare(x, global_scale)()
