"""SGLang's masked SiLU-and-mul with fp8 group quantization with SGLang's own launch
(`silu_and_mul_masked_post_quant_fwd`): 128-column groups, 32 token programs per expert (64
below 4 local experts), 1 warp, 6 stages, no UE8M0 (no heuristic, autotuner or tuned
table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_silu_mul_masked_quant.launcher import SiluMulMaskedQuantConfig
from foreign.sglang_silu_mul_masked_quant.launcher import prepare as _prepare

CONFIG = SiluMulMaskedQuantConfig(blocks_per_expert=None, num_stages=None, num_warps=None)


def prepare(
    x: torch.Tensor, masked_m: torch.Tensor, group: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The fp8 rows and scales (zero-filled once), outside the timed call."""
    return _prepare(CONFIG, x, masked_m, group)


def silu_and_mul_masked_post_quant(
    x: torch.Tensor, masked_m: torch.Tensor, group: int
) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(x, masked_m, group)()
