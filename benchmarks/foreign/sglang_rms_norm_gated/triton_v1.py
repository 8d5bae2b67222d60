"""SGLang's gated RMSNorm with SGLang's own launch (`_layer_norm_fwd` for
`rms_norm_gated`): BLOCK_N the row's next power of two, min(max(BLOCK_N // 256, 1), 8)
warps (1 for a 128-wide head), calc_rows_per_block's rows per program (at most 4, from the
row count and the SM count), Triton's default stages; the output and the rstd buffer made
outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_rms_norm_gated.launcher import RmsNormGatedConfig
from foreign.sglang_rms_norm_gated.launcher import prepare as _prepare

CONFIG = RmsNormGatedConfig(rows_per_block=None, num_warps=None)


def prepare(x: torch.Tensor, z: torch.Tensor, weight: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output, the rstd buffer and the grid, outside the timed call."""
    return _prepare(CONFIG, x, z, weight)


def rms_norm_gated(x: torch.Tensor, z: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return prepare(x, z, weight)()
