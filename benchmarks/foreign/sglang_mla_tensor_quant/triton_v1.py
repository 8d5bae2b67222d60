"""SGLang's per-tensor fp8 quantization for absorbed MLA with SGLang's own launch: a row tile
of next_pow2(dim) values, Triton's default 4 warps for both stages (SGLang passes none; no
heuristic, autotuner or tuned table), grid (tokens, heads)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_mla_tensor_quant.launcher import MlaTensorQuantConfig
from foreign.sglang_mla_tensor_quant.launcher import prepare as _prepare

CONFIG = MlaTensorQuantConfig(block_size=None, stage1_warps=None, stage2_warps=None)


def prepare(x: torch.Tensor) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The fp8 output and the zeroed scale, outside the timed call."""
    return _prepare(CONFIG, x)


def per_tensor_quant_mla_fp8(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(x)()
